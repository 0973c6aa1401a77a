"""`python -m receval_cli` runs the receval command line."""

from receval_cli.launch import main

if __name__ == "__main__":
    main()
