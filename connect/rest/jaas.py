"""Kafka's way of turning on REST basic auth: a JAAS file naming a credentials file.

With ``rest.extension.classes`` naming Kafka's
``org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension``, Kafka
Connect authenticates users through the JAAS login context ``KafkaConnect``, found
through the ``java.security.auth.login.config`` system property (usually
``KAFKA_OPTS=-Djava.security.auth.login.config=/etc/kafka/connect_jaas.conf``)::

    KafkaConnect {
      org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
      file="/etc/kafka/connect.password";
    };

Only what that needs is read: entries, their login modules, flags and options, with
``//``, ``/* */`` and ``#`` comments. The ``KafkaConnect`` entry must hold exactly one
``PropertyFileLoginModule`` with a ``file`` option; anything else in it is an error naming
the file and line, since silently ignoring a login module would weaken what its author
asked for. Other entries (``KafkaServer``, ``KafkaClient``...) are not looked at.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from connect.api.errors import ConnectException

LOGIN_CONTEXT = "KafkaConnect"
PROPERTY_FILE_LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
SYSTEM_PROPERTY = "java.security.auth.login.config"
_FLAGS = frozenset({"required", "requisite", "sufficient", "optional"})


class JaasError(ConnectException):
    """A JAAS file that cannot be used; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class LoginModule:
    class_name: str
    flag: str
    options: dict[str, str]
    line: int


@dataclass(frozen=True, slots=True)
class JaasEntry:
    name: str
    line: int
    modules: list[LoginModule] = field(default_factory=list)


_TOKEN = re.compile(
    r"""
      (?P<space>\s+)
    | (?P<comment>//[^\n]*|\#[^\n]*|/\*.*?\*/)
    | (?P<string>"(?:\\.|[^"\\])*")
    | (?P<punct>[{};=])
    | (?P<word>[^\s{};="]+)
    """,
    re.VERBOSE | re.DOTALL,
)


def _tokens(text: str, source: str) -> list[tuple[str, str, int]]:
    """(kind, value, line) of each token; kind is ``string``, ``punct`` or ``word``."""
    out: list[tuple[str, str, int]] = []
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # an unterminated string or comment
            what = "string" if text[pos] == '"' else "comment"
            raise JaasError(f"{source}:{line}: unterminated {what}")
        kind = m.lastgroup or ""
        value = m.group()
        if kind == "string":
            out.append((kind, re.sub(r"\\(.)", r"\1", value[1:-1], flags=re.DOTALL), line))
        elif kind in ("punct", "word"):
            out.append((kind, value, line))
        line += value.count("\n")
        pos = m.end()
    return out


def parse_jaas(text: str, source: str = "<jaas>") -> dict[str, JaasEntry]:
    """The entries of a JAAS configuration file, by name."""
    tokens = _tokens(text, source)
    entries: dict[str, JaasEntry] = {}
    i = 0

    def expect(what: str, value: str | None = None) -> tuple[str, str, int]:
        nonlocal i
        if i >= len(tokens):
            last = tokens[-1][2] if tokens else 1
            raise JaasError(f"{source}:{last}: the file ends where {what} was expected")
        token = tokens[i]
        if value is not None and (token[0] != "punct" or token[1] != value):
            raise JaasError(f"{source}:{token[2]}: expected {what}, found {token[1]!r}")
        if value is None and token[0] == "punct":
            raise JaasError(f"{source}:{token[2]}: expected {what}, found {token[1]!r}")
        i += 1
        return token

    def at(punct: str) -> bool:
        return i < len(tokens) and tokens[i][0] == "punct" and tokens[i][1] == punct

    while i < len(tokens):
        _, name, line = expect("an entry name")
        expect("'{'", "{")
        entry = JaasEntry(name, line)
        while i < len(tokens) and not at("}"):
            _, class_name, module_line = expect("a login module class")
            _, flag, flag_line = expect("a flag (required, requisite, sufficient or optional)")
            if flag.lower() not in _FLAGS:
                raise JaasError(
                    f"{source}:{flag_line}: {flag!r} is not a login module flag "
                    "(required, requisite, sufficient or optional)"
                )
            options: dict[str, str] = {}
            while i < len(tokens) and not at(";"):
                if at("}"):
                    raise JaasError(f"{source}:{tokens[i][2]}: expected ';' after login module {class_name}")
                _, key, _ = expect("an option name or ';'")
                expect(f"'=' after option {key}", "=")
                _, value, _ = expect(f"the value of option {key}")
                options[key] = value
            expect(f"';' after login module {class_name}", ";")
            entry.modules.append(LoginModule(class_name, flag.lower(), options, module_line))
        expect(f"'}}' closing entry {name}", "}")
        expect(f"';' after the '}}' of entry {name}", ";")
        entries[name] = entry
    return entries


def credentials_file_of(jaas_path: Path) -> Path:
    """The credentials file named by the ``KafkaConnect`` entry of the JAAS file."""
    try:
        text = jaas_path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise JaasError(f"{jaas_path}: cannot read the JAAS file: {exc}") from None
    source = str(jaas_path)
    entry = parse_jaas(text, source).get(LOGIN_CONTEXT)
    if entry is None:
        raise JaasError(
            f"{source}: no {LOGIN_CONTEXT} entry (the login context Kafka's BasicAuthSecurityRestExtension "
            "uses)"
        )
    if not entry.modules:
        raise JaasError(f"{source}:{entry.line}: the {LOGIN_CONTEXT} entry has no login module")
    for module in entry.modules:
        if module.class_name != PROPERTY_FILE_LOGIN_MODULE:
            raise JaasError(
                f"{source}:{module.line}: login module {module.class_name} is not supported; the REST API "
                f"authenticates with {PROPERTY_FILE_LOGIN_MODULE} only"
            )
    if len(entry.modules) > 1:
        raise JaasError(
            f"{source}:{entry.modules[1].line}: the {LOGIN_CONTEXT} entry may hold one "
            "PropertyFileLoginModule only"
        )
    module = entry.modules[0]
    credentials = module.options.get("file")
    if not credentials:
        raise JaasError(f'{source}:{module.line}: PropertyFileLoginModule needs file="<credentials file>"')
    return Path(credentials)


def login_config_path(worker_value: str | None, environ: Mapping[str, str]) -> tuple[Path, str] | None:
    """(path, where it was set) of the JAAS file: the worker key ``java.security.auth.login.config``
    if set, else ``-Djava.security.auth.login.config=...`` in ``KAFKA_OPTS`` (the last one, as
    the JVM takes it)."""
    if worker_value:
        return Path(worker_value), f"worker config {SYSTEM_PROPERTY}"
    options = environ.get("KAFKA_OPTS", "")
    try:
        words = shlex.split(options)
    except ValueError as exc:
        raise JaasError(f"KAFKA_OPTS cannot be split into options: {exc}") from None
    found = None
    prefix = f"-D{SYSTEM_PROPERTY}="
    for word in words:
        if word.startswith(prefix):
            # "==path" replaces the JVM's other login configs; it is the same file to us.
            found = word[len(prefix) :].removeprefix("=")
    if not found:
        return None
    return Path(found), f"KAFKA_OPTS -D{SYSTEM_PROPERTY}"
