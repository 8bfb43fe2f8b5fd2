"""The source's own errors, apart from tweepy: the task module imports them while tweepy
loads only once a task starts, not when the worker discovers its plugins."""

from __future__ import annotations


class RateLimited(Exception):
    def __init__(self, message: str, reset_at: float) -> None:
        super().__init__(message)
        self.reset_at = reset_at


class Transient(Exception):
    pass


class Malformed(Exception):
    def __init__(self, message: str, payload: str) -> None:
        super().__init__(message)
        self.payload = payload
