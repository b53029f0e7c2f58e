"""Benchmark agent: one tool call, then terminate."""

import arena.sdk as sdk


def agent_main(problem):
    sdk.tool("terminate", status="success")
