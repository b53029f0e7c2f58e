"""Miner entry point, with the subnet's usual flags.

    python neurons/miner.py AGENT_FILE --netuid N --network finney \
        --wallet.name NAME --wallet.hotkey HOTKEY [--validator-url URL ...]
    python neurons/miner.py AGENT_FILE --netuid N --local [--database-url URL]

It commits the file's sha256 on chain, then signs the file with the hotkey and
posts it to the given validators (else to every validator that published an
endpoint). The options are exactly those of ``arena submit``: one function
serves both, so they cannot drift apart.
"""

from __future__ import annotations

import typer

from arena.commands.submit import submit


def main() -> None:
    typer.run(submit)


if __name__ == "__main__":
    main()
