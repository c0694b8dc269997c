"""The `signoff` command line (typer). Thin: parse, authenticate, call a workflow."""
