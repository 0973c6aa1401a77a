"""The command line: the Typer app and what each command prints."""
