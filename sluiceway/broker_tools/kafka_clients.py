"""What the five commands share: connection flags, client properties files, building
librdkafka clients, reaching the cluster, and turning failures into exit codes.

Error handling, in one place:

- ``ToolError``: a failure the user can act on (unknown topic, unreachable broker, bad
  file). ``run_command`` prints it as one line on stderr and exits with 1.
- ``KafkaException`` escaping a command: the same, with librdkafka's error text.
- invalid arguments: argparse's usage message and exit code 2.
- Ctrl-C: exit 130, without a traceback.

Client properties files are Java ``.properties`` (``--command-config``,
``--producer.config``, ``--consumer.config``) read by ``connect.runtime.properties``.
Users bring files written for Kafka's Java tools, so Java client keys that librdkafka
knows under another name are renamed, ``sasl.jaas.config`` for PLAIN/SCRAM becomes
``sasl.username``/``sasl.password``, and Java-only keys (serializers, interceptors, ...)
are dropped with a warning instead of making the client refuse to start.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import ClusterMetadata  # type: ignore[attr-defined]  # re-exported untyped

from connect.api import kafka_clients as client_security
from connect.runtime.properties import PropertiesError
from connect.runtime.properties import load as load_properties

T = TypeVar("T")

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130

# Kafka's Java clients wait default.api.timeout.ms (60 s) for the cluster; so do the tools,
# unless the connection is refused outright (see reach_cluster).
DEFAULT_TIMEOUT_S = 60.0

# Java client key -> librdkafka key
_RENAMED = {
    "max.request.size": "message.max.bytes",
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "fetch.max.wait.ms": "fetch.wait.max.ms",
}

# Java client keys librdkafka has no equivalent for: the Java tools' files often carry them.
_JAVA_ONLY = frozenset(
    {
        "key.serializer",
        "value.serializer",
        "key.deserializer",
        "value.deserializer",
        "interceptor.classes",
        "partitioner.class",
        "buffer.memory",
        "max.block.ms",
        "max.poll.records",
        "exclude.internal.topics",
        "default.api.timeout.ms",
        "metric.reporters",
        "metrics.num.samples",
        "metrics.sample.window.ms",
        "metrics.recording.level",
        "reconnect.backoff.max.ms",
        "ssl.keystore.type",
        "ssl.truststore.type",
        "sasl.login.callback.handler.class",
        "sasl.client.callback.handler.class",
        "security.providers",
    }
)


class ToolError(Exception):
    """A failure the user can act on: printed as one line on stderr, exit code 1.

    ``bare`` messages are printed without the command's error prefix, as Kafka's tools
    print their argument-check failures (``Topic 'x' does not exist as expected``).
    """

    def __init__(self, message: str, *, bare: bool = False) -> None:
        super().__init__(message)
        self.bare = bare


def warn(message: str) -> None:
    print(f"WARN: {message}", file=sys.stderr)


def key_value(text: str) -> tuple[str, str]:
    """argparse type of ``--property``-like flags: ``key=value``."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value


def add_client_settings_arguments(parser: argparse.ArgumentParser, role: str, example: str = "") -> None:
    """``--<role>-property KEY=VALUE`` (repeatable) and ``--<role>.config FILE``, as the Java
    console tools spell them, with ``--command-property``/``--command-config`` aliases;
    parsed into ``<role>_property`` and ``<role>_config``."""
    parser.add_argument(
        f"--{role}-property",
        "--command-property",
        dest=f"{role}_property",
        action="append",
        type=key_value,
        default=[],
        metavar="KEY=VALUE",
        help=f"a {role} setting{example} (repeatable)",
    )
    parser.add_argument(
        f"--{role}.config",
        "--command-config",
        dest=f"{role}_config",
        metavar="FILE",
        help=f"{role} properties file",
    )


def add_bootstrap_argument(parser: argparse.ArgumentParser, *aliases: str) -> None:
    parser.add_argument(
        "--bootstrap-server",
        *aliases,
        dest="bootstrap_server",
        required=True,
        metavar="HOST:PORT[,HOST:PORT]",
        help="REQUIRED: the Kafka server(s) to connect to",
    )


def read_properties_file(path: str, flag: str) -> dict[str, str]:
    """The key/values of a Java .properties file given to ``flag``."""
    try:
        return dict(load_properties(path).values)
    except PropertiesError as exc:
        raise ToolError(f"{flag} {exc}") from None


def api_timeout_s(props: Mapping[str, str], default: float = DEFAULT_TIMEOUT_S) -> float:
    """The Java clients' ``default.api.timeout.ms`` of a properties file, in seconds."""
    raw = props.get("default.api.timeout.ms")
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ToolError(f"default.api.timeout.ms must be a number of milliseconds, not {raw!r}") from None
    if value <= 0:
        raise ToolError(f"default.api.timeout.ms must be positive, not {value}")
    return value / 1000


def jaas_credentials(jaas: str) -> dict[str, str]:
    """``sasl.username``/``sasl.password`` of a PLAIN or SCRAM ``sasl.jaas.config`` (the
    workers' translation, ``connect.api.kafka_clients``), failing as a ToolError."""
    try:
        return client_security.jaas_credentials(jaas)
    except client_security.ClientSecurityError as exc:
        raise ToolError(str(exc)) from None


def librdkafka_settings(props: Mapping[str, str]) -> dict[str, str]:
    """Client properties as librdkafka takes them (see the module docstring)."""
    out: dict[str, str] = {}
    for key, value in props.items():
        if key in _JAVA_ONLY:
            if key != "default.api.timeout.ms":  # the tools use it as their timeout
                warn(f"{key} is a Java client setting without a librdkafka equivalent; ignored")
            continue
        if key == "sasl.jaas.config":
            out.update(jaas_credentials(value))
            continue
        if key == "ssl.endpoint.identification.algorithm" and value == "":
            value = "none"  # Java's way of switching host name verification off
        out[_RENAMED.get(key, key)] = value
    return out


class ConnectionErrors:
    """librdkafka's ``error_cb``: remembers why brokers cannot be reached.

    librdkafka retries connections forever and reports each failure here; the tools
    use that to fail fast with the reason instead of timing out silently.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.last: KafkaError | None = None
        self.all_brokers_down = False
        self.fatal: KafkaError | None = None

    def __call__(self, err: KafkaError) -> None:
        with self._lock:
            if err.code() == KafkaError._ALL_BROKERS_DOWN:
                self.all_brokers_down = True
                return
            if err.fatal() or err.code() in (
                KafkaError._AUTHENTICATION,
                KafkaError.SASL_AUTHENTICATION_FAILED,
            ):
                self.fatal = err
            self.last = err

    def reason(self) -> str:
        with self._lock:
            err = self.fatal or self.last
        return err.str() if err is not None else "no answer"


def client_config(bootstrap: str, settings: Mapping[str, str], errors: ConnectionErrors) -> dict[str, Any]:
    config: dict[str, Any] = {"bootstrap.servers": bootstrap, "error_cb": errors}
    config.update(settings)
    if "debug" not in config and "log_level" not in config:
        # The reasons go through error_cb into one clear line; librdkafka's own log of
        # every reconnect attempt is noise on a terminal (set debug=... to see it).
        config["log_level"] = 0
    config["bootstrap.servers"] = bootstrap
    return config


def build(factory: Callable[[dict[str, Any]], T], config: dict[str, Any], what: str) -> T:
    """A librdkafka client; a configuration it refuses becomes a ToolError."""
    try:
        return factory(config)
    except KafkaException as exc:
        raise ToolError(f"invalid {what} configuration: {error_text(exc)}") from None
    except (ValueError, TypeError) as exc:
        raise ToolError(f"invalid {what} configuration: {exc}") from None


class _Client(Protocol):
    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata: ...

    def poll(self, timeout: float = ...) -> Any: ...


def reach_cluster(
    client: _Client, bootstrap: str, errors: ConnectionErrors, timeout_s: float, topic: str | None = None
) -> ClusterMetadata:
    """The cluster's metadata, once a broker answers.

    Fails after ``timeout_s``, or as soon as librdkafka reports every bootstrap broker
    down (connection refused, unknown host) or a fatal error such as failed
    authentication, naming the bootstrap servers and the reason.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        remaining = deadline - time.monotonic()
        try:
            return client.list_topics(topic, timeout=max(0.05, min(0.5, remaining)))
        except KafkaException:
            pass
        client.poll(0)  # serves error_cb
        if errors.fatal is not None or errors.all_brokers_down:
            raise ToolError(f"Could not reach the Kafka cluster at {bootstrap}: {errors.reason()}")
        if time.monotonic() >= deadline:
            raise ToolError(
                f"Could not reach the Kafka cluster at {bootstrap} within {timeout_s:g} s: {errors.reason()}"
            )


def wait(future: concurrent.futures.Future[T], timeout_s: float, what: str) -> T:
    """The result of an admin future; librdkafka times the request out itself, this is a backstop."""
    try:
        return future.result(timeout_s + 5)
    except concurrent.futures.TimeoutError:
        raise ToolError(f"{what}: no answer from the cluster within {timeout_s:g} s") from None


def error_text(exc: BaseException) -> str:
    """librdkafka's text of a KafkaException (its args hold a KafkaError)."""
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return str(exc.args[0].str())
    return str(exc)


def error_code(exc: BaseException) -> int | None:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return int(exc.args[0].code())
    return None


def run_command(body: Callable[[], int], error_prefix: str = "Error: ") -> int:
    """Run a command's body: failures become one stderr line and an exit code."""
    try:
        return body()
    except ToolError as exc:
        print(str(exc) if exc.bare else f"{error_prefix}{exc}", file=sys.stderr)
        return EXIT_ERROR
    except KafkaException as exc:
        print(f"{error_prefix}{error_text(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
