"""Race test agent: gives up on every problem without recommending anything (scores 0)."""

import arena.sdk as sdk


def agent_main(problem):
    sdk.tool("terminate", status="failure")
