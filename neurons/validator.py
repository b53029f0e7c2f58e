"""Validator entry point, with the subnet's usual flags.

    python neurons/validator.py --netuid N --network finney \
        --wallet.name NAME --wallet.hotkey HOTKEY --database-url postgresql://...
    python neurons/validator.py --local [--database-url sqlite:///./arena.db] --suite SUITE_DIR --once

It brings the store to the latest schema (``arena.store.migrate.upgrade_database``),
serves the submission API in the same process (``--no-api`` to leave it to
``arena serve``) and runs the race cycle after cycle. The options are those of
``arena validator run``; only the API default differs.
"""

from __future__ import annotations

import typer

from arena.commands.validator import validator_command

validator = validator_command(serve_api=True, doc="Migrate the store, serve the API and run the race.")


def main() -> None:
    typer.run(validator)


if __name__ == "__main__":
    main()
