"""``/docs``: the interactive API reference (Swagger UI) served from this process, so it works offline.

FastAPI's own ``/docs`` page loads Swagger UI's script and stylesheet from a CDN: on a validator without
internet (or behind a firewall) it was a blank page. The same files ship in the ``swagger-ui-bundle-v2`` wheel
(``swagger_ui_bundle``); only the three the page needs are served, by name, from ``/docs/assets/``.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from swagger_ui_bundle import swagger_ui_path

from arena.api.deps import not_found

router = APIRouter(include_in_schema=False)

ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}
PREFIX = "/docs/assets/"


@router.get("/docs", response_class=HTMLResponse)
def docs() -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title="trajectory-arena validator API",
        swagger_js_url=PREFIX + "swagger-ui-bundle.js",
        swagger_css_url=PREFIX + "swagger-ui.css",
        swagger_favicon_url=PREFIX + "favicon-32x32.png",
        # No online validator badge: it would send the schema's URL to swagger.io.
        swagger_ui_parameters={"validatorUrl": None},
    )


@router.get(PREFIX + "{name}")
def asset(name: str) -> FileResponse:
    if name not in ASSETS:
        raise not_found(f"docs asset {name!r}")
    return FileResponse(
        str(swagger_ui_path / name), media_type=ASSETS[name], headers={"Cache-Control": "max-age=86400"}
    )
