"""Hostile: calls the model until the proxy refuses, then tries a model it may not use."""

import arena.sdk as sdk


def agent_main(problem):
    client = sdk.openai_client()
    refused = None
    for i in range(100):
        try:
            client.chat.completions.create(model=sdk.model(), messages=[{"role": "user", "content": f"hi {i}"}])
        except Exception as exc:  # noqa: BLE001
            refused = (i, type(exc).__name__, getattr(exc, "status_code", None))
            break
    print("REFUSED", refused)
    try:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}])
    except Exception as exc:  # noqa: BLE001
        print("OTHER MODEL", getattr(exc, "status_code", None))
