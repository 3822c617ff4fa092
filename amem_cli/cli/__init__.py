"""The command line: Typer + Rich only, a thin layer over the services."""
