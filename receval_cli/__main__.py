"""`python -m receval_cli` runs the receval command line."""

from receval_cli.cli.app import main

if __name__ == "__main__":
    main()
