"""`python -m amem_cli`: the same as the `amem` command."""

from amem_cli.cli.entry import main

main()
