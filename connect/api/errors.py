"""The exceptions plugins raise and the framework interprets.

::

    ConnectException              something went wrong; a task that raises it goes FAILED
    ├── RetriableException        transient: the framework retries the same operation
    ├── DataException             a record cannot be converted or does not match its schema
    │   └── SchemaProjectorException
    ├── NotFoundException         a named connector, task or plugin does not exist
    ├── AlreadyExistsException    a connector with that name already exists
    └── IllegalWorkerStateException

``RetriableException`` may carry ``retry_after`` (seconds) when the connector knows
how long to back off (a rate limit's reset time, for example); the runtime waits at
least that long before retrying.
"""

from __future__ import annotations


class ConnectException(Exception):
    """Base of every Connect error."""


class RetriableException(ConnectException):
    """The operation failed but may succeed if retried (a timeout, a broker not available)."""

    def __init__(self, message: str = "", *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class DataException(ConnectException):
    """Data could not be converted, or does not match its schema."""


class SchemaProjectorException(DataException):
    pass


class NotFoundException(ConnectException):
    pass


class AlreadyExistsException(ConnectException):
    pass


class IllegalWorkerStateException(ConnectException):
    pass
