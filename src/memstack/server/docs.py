"""The API's documentation page, served without a network: Swagger UI at ``/docs``.

FastAPI's own pages load their scripts from a CDN, so on a machine without internet access (or behind a proxy that
blocks it) they are blank. The same scripts ship in the ``fastapi-offline`` package; this module serves them from
the server itself, under ``/docs/static``. There is no ``/redoc``: ReDoc fetches its logo from its vendor's site.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse

__all__ = ["mount_docs"]

_STATIC = "/docs/static"


def mount_docs(app: FastAPI, *, title: str) -> None:
    """``/docs`` for ``app`` (created with ``docs_url=None, redoc_url=None``), its scripts included."""
    assets = Path(str(files("fastapi_offline") / "static"))
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{title} API",
            swagger_js_url=f"{_STATIC}/swagger-ui-bundle.js",
            swagger_css_url=f"{_STATIC}/swagger-ui.css",
            swagger_favicon_url=f"{_STATIC}/favicon.png",
        )

    app.mount(_STATIC, StaticFiles(directory=assets), name="docs-static")
