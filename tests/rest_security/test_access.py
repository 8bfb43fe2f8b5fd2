"""Which requests need a user, and what each role may do (pure decisions)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.rest.access import READ_METHODS, Access, Role, required_access, role_allows

METHODS = ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]


@pytest.mark.parametrize(
    ("method", "path", "access"),
    [
        ("GET", "/health", Access.OPEN),
        ("GET", "/health/", Access.OPEN),
        ("POST", "/health", Access.OPEN),  # the app answers 405; nothing to protect
        ("GET", "/", Access.USER),
        ("GET", "/metrics", Access.USER),
        ("GET", "/ui", Access.USER),
        ("GET", "/ui/app.js", Access.USER),
        ("GET", "/openapi.json", Access.USER),
        ("GET", "/docs", Access.USER),
        ("GET", "/healthz", Access.USER),
        ("GET", "/health/../connectors", Access.USER),
        ("PUT", "/connectors/c/tasks", Access.SIGNED),
        ("PUT", "/connectors/c/tasks/", Access.SIGNED),
        ("POST", "/connectors/c/tasks", Access.SIGNED),  # Kafka's method for the same endpoint
        ("put", "/connectors/c/tasks", Access.SIGNED),
        ("PUT", "/connectors/c/fence", Access.SIGNED),
        ("GET", "/connectors/c/tasks", Access.USER),  # the task list users read
        ("DELETE", "/connectors/c/tasks", Access.USER),
        ("POST", "/connectors/c/fence", Access.USER),
        ("PUT", "/connectors/c/tasks/0/restart", Access.USER),
        ("PUT", "/connectors/a/b/tasks", Access.USER),
        ("PUT", "/x/connectors/c/tasks", Access.USER),
        ("POST", "/connectors", Access.USER),
    ],
)
def test_required_access(method: str, path: str, access: Access) -> None:
    assert required_access(method, path) is access


@given(st.sampled_from(METHODS), st.from_regex(r"/[a-z/]{0,30}", fullmatch=True))
def test_only_health_and_the_signed_endpoints_skip_users(method: str, path: str) -> None:
    access = required_access(method, path)
    normalized = path.rstrip("/") or "/"
    if access is Access.OPEN:
        assert normalized == "/health"
    elif access is Access.SIGNED:
        assert method in ("PUT", "POST") and normalized.startswith("/connectors/")
        assert normalized.endswith(("/tasks", "/fence")) and normalized.count("/") == 3


@given(st.sampled_from(METHODS))
def test_admins_do_anything_viewers_only_read(method: str) -> None:
    assert role_allows(Role.ADMIN, method)
    assert role_allows(Role.VIEWER, method) == (method in READ_METHODS)
    assert role_allows(Role.VIEWER, method.lower()) == (method in READ_METHODS)


def test_role_names() -> None:
    assert Role.parse(" Viewer ") is Role.VIEWER
    assert Role.parse("ADMIN") is Role.ADMIN
    with pytest.raises(ValueError, match=r"unknown role 'operator' \(known roles: admin, viewer\)"):
        Role.parse("operator")
