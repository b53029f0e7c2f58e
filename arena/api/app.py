"""The validator's HTTP API: ``create_app`` wires settings, store and chain into one FastAPI app.

Routes (all typed in the OpenAPI schema at ``/openapi.json``):

- ``POST /v1/submissions``: a signed agent file (``routes/submissions.py``)
- ``GET /v1/submissions[/{id}[/source|/episodes]]``: submissions, results, source after the embargo
- ``GET /v1/leaderboard``: standings of the latest ranked cycle; ``GET /v1/history``: every finished cycle
- ``GET /``, ``/cycles[/{n}]``, ``/submissions/{id}``, ``/episodes/{id}``: the HTML dashboard (``routes/pages.py``
  over ``dashboard.py``)
- ``GET /v1/cycles[/{n}[/stages]]``: cycles and their stages
- ``GET /v1/episodes/{id}``: one episode, redacted as ``redaction.py`` says
- ``GET /healthz``, ``GET /metrics`` (Prometheus), ``GET /docs`` (Swagger UI from local files, ``routes/docs.py``)
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from arena.api.deps import ApiContext, ApiError
from arena.api.embargo_view import embargo_rule
from arena.api.metrics import ApiMetrics, LatencyMiddleware
from arena.api.routes import (
    cycles,
    docs,
    episodes,
    health,
    leaderboard,
    metrics,
    pages,
    submission_reads,
    submissions,
    suite,
)
from arena.api.schemas import ErrorBody
from arena.api.settings import ApiSettings, AppSettings
from arena.chain.protocol import Chain
from arena.intake.service import SubmissionIntake
from arena.intake.signed_requests import IntakeError
from arena.store.db import Store, open_store


class ApiSetupError(ValueError):
    """The API cannot start as configured (no chain, unreadable wallet); the message says what to set."""


def resolve_validator_hotkey(api: ApiSettings) -> str | None:
    """The receiver hotkey: configured outright, else read from the validator wallet's public key."""
    if api.validator_hotkey:
        return api.validator_hotkey
    if not api.wallet_name:
        return None
    from arena.wallets import WalletError, hotkey_address, load_wallet

    try:
        return hotkey_address(load_wallet(api.wallet_path, api.wallet_name, api.wallet_hotkey))
    except WalletError as exc:
        raise ApiSetupError(f"api.wallet_name: {exc}") from None


def default_chain(api: ApiSettings, store: Store) -> Chain:
    if api.chain == "local":
        from arena.chain.local import LocalChain

        return LocalChain(store.sessions, api.netuid)
    from arena.chain.bittensor_chain import BittensorChain, ChainConfigError

    try:
        return BittensorChain(api.network, api.netuid)  # reads only: the API never signs chain writes
    except ChainConfigError as exc:
        raise ApiSetupError(f"api.network / api.netuid: {exc}") from None


def create_app(
    settings: AppSettings,
    *,
    store: Store | None = None,
    chain: Chain | None = None,
    validator_hotkey: str | None = None,
) -> FastAPI:
    """The API on ``store`` (default: ``ARENA_DATABASE_URL``) and ``chain`` (default from ``settings.api.chain``).

    ``settings`` is an ``ArenaSettings`` (the groups ``AppSettings`` names). ``validator_hotkey``
    (the receiver of signed submissions) defaults to ``api.validator_hotkey``, else the
    ``api.wallet_name`` wallet's hotkey; a validator process passes its own.
    """
    api = settings.api
    store = store or open_store()
    chain = chain or default_chain(api, store)
    validator_hotkey = validator_hotkey or resolve_validator_hotkey(api)
    app_metrics = ApiMetrics(store)
    app = FastAPI(
        title="trajectory-arena validator API",
        version="1",
        description="Signed agent submissions, the leaderboard, race cycles and their episodes.",
        docs_url=None,  # routes/docs.py serves /docs from local files: FastAPI's own loads them from a CDN
        redoc_url=None,  # ReDoc too has no local copy; /docs and /openapi.json cover it
    )
    app.state.context = ApiContext(
        settings=settings,
        api=api,
        store=store,
        chain=chain,
        validator_hotkey=validator_hotkey,
        embargo=embargo_rule(settings.race),
        metrics=app_metrics,
        intake=SubmissionIntake(store, chain, api.intake, validator_hotkey),
    )
    routers = (pages, docs, submissions, submission_reads, leaderboard, cycles, episodes, suite, health, metrics)
    for module in routers:
        app.include_router(module.router, responses=INVALID_REQUEST)
    app.add_middleware(LatencyMiddleware, metrics=app_metrics, access_log=api.access_log)

    @app.exception_handler(IntakeError)
    async def _intake_error(_request: Request, exc: IntakeError) -> JSONResponse:
        return JSONResponse(exc.to_body(), status_code=exc.status_code, headers=exc.headers())

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(invalid_request_body(exc), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # No such route, or the wrong method: the same shape as every other error.
        code = HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
        return JSONResponse(
            {"error": code, "detail": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(_jsonable(exc.to_body()), status_code=exc.status_code)

    return app


# Bad parameters answer in the same {"error", "detail"} shape as every other error.
INVALID_REQUEST: dict[int | str, dict] = {
    422: {"model": ErrorBody, "description": "A parameter is malformed or out of range."}
}


HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


def invalid_request_body(exc: RequestValidationError) -> dict[str, object]:
    """One sentence naming each bad parameter; the offending input is not echoed (it may be huge)."""
    problems = []
    for error in exc.errors()[:10]:
        where = " ".join(str(part) for part in error.get("loc", ()))
        problems.append(f"{where}: {error.get('msg', 'invalid')}"[:300])
    return {"error": "invalid_request", "detail": "; ".join(problems) or "invalid request"}


def _jsonable(body: dict[str, object]) -> dict[str, object]:
    return {key: value.isoformat() if hasattr(value, "isoformat") else value for key, value in body.items()}
