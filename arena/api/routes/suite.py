"""``/v1/suite``: the public part of the suite the race runs on, so miners test on what qualifies them.

Only what the suite itself marks publishable leaves here: the public manifest
(no seed, no sealed partition) and the public qualifying problems, rebuilt from
the store byte for byte as the suite wrote them (their sha256 is the manifest's).
Plus the catalog's own manifest and where to get the catalog.
"""

from __future__ import annotations

import hashlib
import json

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from arena.api.deps import ApiError, Context
from arena.api.schemas import ErrorBody
from arena.problems.partitions import PartitionName, problem_file_bytes
from arena.problems.suite_manifest import PublicManifest
from arena.store.suites import current_suite_id, suite_manifest, suite_problems

router = APIRouter(tags=["suite"])


class CatalogInfo(BaseModel):
    manifest: dict | None = Field(description="The catalog's catalog.json (its source and size), when published.")
    how_to_get: str = Field(description="Where to download the catalog, or the command that builds the same one.")


class SuiteInfo(BaseModel):
    suite_id: str
    public: PublicManifest = Field(description="The public manifest: no seed, no sealed partition.")
    qualifying_url: str = Field(description="Path of the public qualifying problems (JSONL).")
    catalog: CatalogInfo


def _current_suite_id(session) -> str:
    """The suite of the newest cycle, else the newest imported suite."""
    suite_id = current_suite_id(session)
    if suite_id is None:
        raise ApiError(
            404, "no_suite", "this validator has no suite yet (the operator imports one with `arena suite import`)"
        )
    return suite_id


def catalog_info(context) -> CatalogInfo:
    """The catalog's manifest (catalog.json) and how a miner gets the same catalog."""
    path = context.settings.catalog.path / "catalog.json"
    manifest = None
    if path.is_file():
        try:
            manifest = json.loads(path.read_text())
        except (OSError, ValueError):
            manifest = None
    source = (manifest or {}).get("source") or {}
    if context.api.catalog_url:
        how = f"download it from {context.api.catalog_url}"
    elif source.get("kind") == "synthetic":
        how = f"build it: arena catalog build --synthetic {source.get('products')} --seed {source.get('seed')} --out catalog"
    elif source.get("kind") == "documents":
        how = (
            "build it from the official ShoppingBench documents file: "
            "arena catalog build --from documents.jsonl.gz --out catalog (docs/environment.md)"
        )
    elif source.get("kind") == "taskpack":
        how = "build the task pack the same way: arena catalog build --from-tasks FILE... (docs/taskpack.md)"
    else:
        how = "ask the validator's operator (no catalog manifest is published)"
    return CatalogInfo(manifest=manifest, how_to_get=how)


@router.get(
    "/v1/suite",
    response_model=SuiteInfo,
    responses={404: {"model": ErrorBody, "description": "No suite yet."}},
    summary="The current suite's public manifest, its catalog and where to get it",
)
def suite(context: Context) -> SuiteInfo:
    with context.store.transaction() as session:
        suite_id = _current_suite_id(session)
        public = PublicManifest.of(suite_manifest(session, suite_id))
    return SuiteInfo(
        suite_id=suite_id, public=public, qualifying_url="/v1/suite/qualifying.jsonl", catalog=catalog_info(context)
    )


@router.get(
    "/v1/suite/qualifying.jsonl",
    response_class=Response,
    responses={
        200: {"content": {"application/x-ndjson": {}}},
        404: {"model": ErrorBody, "description": "No suite yet."},
        500: {"model": ErrorBody, "description": "The stored problems do not match the manifest."},
    },
    summary="The public qualifying problems, exactly the suite's public/qualifying.jsonl",
)
def qualifying(context: Context) -> Response:
    with context.store.transaction() as session:
        suite_id = _current_suite_id(session)
        manifest = suite_manifest(session, suite_id)
        body = problem_file_bytes(suite_problems(session, suite_id, PartitionName.public))
    if hashlib.sha256(body).hexdigest() != manifest.files[PartitionName.public].sha256:
        raise ApiError(500, "suite_mismatch", f"the stored public problems of {suite_id} do not match its manifest")
    return Response(body, media_type="application/x-ndjson", headers={"X-Suite-Id": suite_id})
