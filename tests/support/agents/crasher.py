"""An agent that raises."""

import arena.sdk as sdk


def agent_main(problem):
    sdk.tool("find_product", q="shirt", page=1)
    raise ValueError("agent bug: no candidates left")
