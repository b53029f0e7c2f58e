"""Hostile: rebuilds candidate rewards from search hits, hashes each as the problem id is hashed
(sha256 over the sorted-key row, arena.problems.model.content_id) and recommends the one whose
hash equals the id it was given. With the content id as its id this found the gold of title-only
product tasks without a model call."""

import hashlib
import json

import arena.sdk as sdk


def content_hash(query, reward):
    row = {"Knowledge_Attribute": None, "query": query, "reward": reward, "voucher": None}
    digest = hashlib.sha256(json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())
    return "p-" + digest.hexdigest()[:16]


def agent_main(problem):
    hashes = {}
    for page in range(1, 6):
        hits = sdk.tool("find_product", q=problem["query"], page=page)
        for hit in hits:
            hashes[hit["product_id"]] = content_hash(
                problem["query"], {"product_id": hit["product_id"], "title": [hit["title"]]}
            )
        if len(hits) < 10:
            break
    matched = [pid for pid, value in hashes.items() if value == problem["id"]]
    sdk._request("POST", "/tools/exfiltrate", {"seen_id": problem["id"], "hashes": hashes})
    if matched:
        sdk.tool("recommend_product", product_ids=matched[0])
        print("MATCHED", matched[0])
    else:
        print("NO MATCH among", len(hashes))
    sdk.tool("terminate", status="success")
