"""Command-line surface: thin commands that parse, call one library function and format."""
