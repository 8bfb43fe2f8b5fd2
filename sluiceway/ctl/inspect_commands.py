"""Commands that read: ``get``, ``describe``, ``validate``, ``logs level``.

With ``-o json``/``-o yaml`` they print the REST answers unchanged (``describe`` prints
``{"info": ..., "status": ..., "topics": ...}``, the three answers it combines).
"""

from __future__ import annotations

from typing import Any

from sluiceway.ctl import rows
from sluiceway.ctl.config_files import parse_config
from sluiceway.ctl.errors import RefusedError, UsageError
from sluiceway.ctl.exit_codes import ExitCode, overall
from sluiceway.ctl.rest_models import (
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorStatus,
    ExpandedConnector,
    LoggerLevel,
    PluginInfo,
    ValidationResult,
    parse_answer,
)
from sluiceway.ctl.session import Session, read_input


def get_connectors(s: Session, names: list[str]) -> int:
    raw = s.client.connectors_expanded()
    expanded = parse_answer(dict[str, ExpandedConnector], raw, "GET /connectors?expand=status&expand=info")
    missing = [n for n in names if n not in expanded]
    if s.out.fmt == "table":
        s.out.table(rows.connectors_table(expanded, names or None), state_column="STATE")
    else:
        s.out.document({n: v for n, v in raw.items() if not names or n in names})
    for name in missing:
        s.out.error(f"connector {name} not found")
    return ExitCode.REFUSED if missing else ExitCode.OK


def get_plugins(s: Session, everything: bool) -> int:
    raw = s.client.plugins(connectors_only=not everything)
    if s.out.fmt == "table":
        s.out.table(rows.plugins_table(parse_answer(list[PluginInfo], raw, "GET /connector-plugins")))
    else:
        s.out.document(raw)
    return ExitCode.OK


def get_offsets(s: Session, name: str) -> int:
    raw = s.client.offsets(name)
    if s.out.fmt == "table":
        offsets = parse_answer(ConnectorOffsets, raw, f"GET /connectors/{name}/offsets")
        if offsets.offsets:
            s.out.table(rows.offsets_table(offsets))
        else:
            s.out.note(f"connector {name} has no committed offsets")
    else:
        s.out.document(raw)
    return ExitCode.OK


def get_loggers(s: Session) -> int:
    raw = s.client.loggers()
    if s.out.fmt == "table":
        s.out.table(rows.loggers_table(parse_answer(dict[str, LoggerLevel], raw, "GET /admin/loggers")))
    else:
        s.out.document(raw)
    return ExitCode.OK


def _describe_one(s: Session, name: str) -> None:
    info_raw = s.client.connector(name)
    status_raw = s.client.status(name)
    topics_raw = s.client.topics(name)
    topics: list[str] | None = None
    if topics_raw is not None:
        entry = topics_raw.get(name) if isinstance(topics_raw, dict) else None
        topics = list(entry.get("topics", [])) if isinstance(entry, dict) else []
    if s.out.fmt != "table":
        s.out.document({"info": info_raw, "status": status_raw, "topics": topics})
        return
    info = parse_answer(ConnectorInfo, info_raw, f"GET /connectors/{name}")
    status = parse_answer(ConnectorStatus, status_raw, f"GET /connectors/{name}/status")
    s.out.description(rows.describe(info, status, topics))


def describe_connectors(s: Session, names: list[str]) -> int:
    codes: list[int] = []
    for i, name in enumerate(names):
        if i and s.out.fmt == "table":
            s.out.line("")
        try:
            _describe_one(s, name)
            codes.append(ExitCode.OK)
        except RefusedError as exc:
            s.out.error(f"{name}: {exc}")
            codes.append(exc.exit_code)
    return overall(codes)


def run_validation(s: Session, config: dict[str, str], source: str) -> tuple[Any, ValidationResult]:
    """The raw answer and parsed result of validating ``config`` with its own connector class."""
    plugin = config.get("connector.class")
    if not plugin:
        raise UsageError(f"{source}: no 'connector.class': cannot tell which plugin validates it")
    raw = s.client.validate(plugin, config)
    return raw, parse_answer(ValidationResult, raw, f"PUT /connector-plugins/{plugin}/config/validate")


def show_validation(s: Session, result: ValidationResult, source: str) -> None:
    errors = rows.validation_errors(result)
    if not errors:
        s.out.line(f"{source}: valid ({result.name})", style="green")
        return
    s.out.line(f"{source}: {result.error_count} error(s) ({result.name})", style="bold red")
    for key, message in errors:
        s.out.line(f"  {key}: {message}")


def validate(s: Session, files: list[str], name: str | None) -> int:
    if name is not None and len(files) > 1:
        raise UsageError("--name applies to one file; give a single -f")
    codes: list[int] = []
    for path in files:
        text, source = read_input(path)
        _, config = parse_config(text, source, name)
        raw, result = run_validation(s, config, source)
        if s.out.fmt == "table":
            show_validation(s, result, source)
        else:
            s.out.document(raw)
        codes.append(ExitCode.REFUSED if result.error_count > 0 else ExitCode.OK)
    return overall(codes)


def logs_level(s: Session, logger: str | None, level: str | None, scope: str) -> int:
    if logger is None:
        return get_loggers(s)
    if level is None:
        raw = s.client.logger(logger)
        if s.out.fmt == "table":
            current = parse_answer(LoggerLevel, raw, f"GET /admin/loggers/{logger}")
            s.out.table(rows.loggers_table({logger: current}))
        else:
            s.out.document(raw)
        return ExitCode.OK
    affected = s.client.set_logger(logger, level, scope)
    if s.out.fmt != "table":
        s.out.document(affected)
    elif affected is None:
        s.out.line(f"logger {logger} set to {level} on every worker of the cluster")
    else:
        changed = parse_answer(list[str], affected, f"PUT /admin/loggers/{logger}")
        s.out.line(f"logger {logger} set to {level}; loggers changed: {', '.join(changed) or 'none'}")
    return ExitCode.OK
