"""The command line: thin typer commands that parse options, call one library function and render."""
