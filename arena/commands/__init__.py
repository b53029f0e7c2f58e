"""The `arena` subcommands, one module per group; `arena/cli.py` assembles them."""
