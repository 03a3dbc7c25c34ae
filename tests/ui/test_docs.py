"""``/docs`` (Swagger UI) renders in a browser that can reach nothing but the server: its scripts come from the server
itself, not a CDN."""

from __future__ import annotations

from playwright.sync_api import Page, Route, expect

from .conftest import Served


def _offline(page: Page, served: Served) -> list[str]:
    """Refuse every request that leaves the server; the list collects what was tried."""
    outside: list[str] = []

    def handle(route: Route) -> None:
        if route.request.url.startswith(served.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", handle)
    return outside


def test_swagger_ui_works_offline(page: Page, local_server: Served) -> None:
    outside = _offline(page, local_server)
    page.goto(f"{local_server.url}/docs")
    expect(page.locator(".opblock").first).to_be_visible()
    assert page.locator(".opblock").count() >= 20  # every operation of the API
    expect(page.get_by_text("/v1/chat/completions", exact=True)).to_be_visible()
    assert outside == []


def test_there_is_no_page_that_needs_the_network(local_server: Served) -> None:
    with local_server.api() as api:
        assert api.get("/redoc").status_code == 404  # ReDoc loads its logo from its vendor's site
