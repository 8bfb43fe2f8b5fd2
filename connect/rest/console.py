"""The web console at ``/ui``: static HTML, CSS and JavaScript modules, nothing rendered here.

The page talks to the worker only through the public REST API (Kafka Connect's paths,
``/metrics`` and the ``/sluiceway/topics`` extension) from the browser, so it shows
nothing that another client of the API could not see, and it works the same against
any worker of a cluster. No build step and no CDN: the files under ``console/`` are
what the browser runs, and they work offline.

``/ui`` (and ``/ui/``, which the app's trailing-slash rule turns into ``/ui``) answers
``index.html``; the assets are under ``/ui/`` by absolute path, because a browser at
``/ui`` and one at ``/ui/`` would resolve relative paths differently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response

ASSETS = Path(__file__).with_name("console")
PATH = "/ui"

router = APIRouter()


@router.get(PATH, include_in_schema=False)
async def index() -> FileResponse:
    # no-cache: a browser revalidates (ETag) and so never runs a stale console after an upgrade.
    return FileResponse(ASSETS / "index.html", headers={"Cache-Control": "no-cache"})


class _Assets(StaticFiles):
    """The console's files; revalidated on every load, like the page."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


def assets() -> StaticFiles:
    """The console's files, for ``app.mount(PATH, assets())``."""
    return _Assets(directory=ASSETS)
