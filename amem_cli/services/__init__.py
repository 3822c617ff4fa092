"""Services: what the CLI, the Python API (and later the server) call."""
