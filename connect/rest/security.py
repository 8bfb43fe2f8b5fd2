"""What the REST app is wrapped in for its worker config: CORS outside, authentication
inside it (so a browser's preflight, which never carries credentials, is answered)."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

from connect.rest.auth import AuthenticationMiddleware, authenticator_from_config
from connect.rest.cors import cors_options
from connect.runtime.config import WorkerConfig


def secure(app: FastAPI, config: WorkerConfig, environ: Mapping[str, str] | None = None) -> None:
    """Add the middleware ``config`` asks for to ``app`` (call it after the app's own
    middleware: the last one added runs first)."""
    authenticator = authenticator_from_config(config, environ)
    if authenticator is not None:
        app.add_middleware(AuthenticationMiddleware, authenticator=authenticator)
    cors = cors_options(config.access_control_allow_origin, config.access_control_allow_methods)
    if cors is not None:
        app.add_middleware(CORSMiddleware, **cors)
