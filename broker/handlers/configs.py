"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for topics (and, read-only, the broker).

Topic values are reported with their source, as Kafka does: DYNAMIC_TOPIC_CONFIG
for overrides, STATIC_BROKER_CONFIG where ``server.properties`` set the broker
key, DEFAULT_CONFIG otherwise. Kafka Connect relies on this to check that its
internal topics are compacted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import CLUSTER, Operation, authorize, topic
from broker.broker import RequestContext
from broker.logs import UnknownTopic
from broker.topic_config import KEYS, ConfigRow, ConfigSource, ConfigType, InvalidConfig, validate_overrides
from broker.topic_config import describe as describe_topic

if TYPE_CHECKING:
    from broker.protocol.requests import (
        AlterConfigsRequest,
        DescribeConfigsRequest,
        IncrementalAlterConfigsRequest,
    )

TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _broker_entries(ctx: RequestContext) -> list[ConfigRow]:
    cfg = ctx.broker.config
    given = cfg.given
    out = []
    for name, value in sorted(cfg.as_kafka_dict().items()):
        text = None if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
        src = ConfigSource.STATIC_BROKER_CONFIG if name in given else ConfigSource.DEFAULT_CONFIG
        typ = (
            ConfigType.BOOLEAN
            if isinstance(value, bool)
            else ConfigType.LONG
            if isinstance(value, int)
            else ConfigType.DOUBLE
            if isinstance(value, float)
            else ConfigType.STRING
        )
        out.append((name, text, src, typ, ""))
    return out


async def describe(ctx: RequestContext, req: DescribeConfigsRequest) -> Any:
    b = ctx.broker
    results = []
    for r in req.resources:
        base = {"resource_type": r.resource_type, "resource_name": r.resource_name}
        denied = _denied(ctx, Operation.DESCRIBE_CONFIGS, r.resource_type, r.resource_name)
        if denied is not None:
            results.append({**base, "error_code": denied, "error_message": None, "configs": ()})
            continue
        if r.resource_type == TOPIC:
            info = b.logs.topic(r.resource_name)
            if info is None:
                results.append(
                    {
                        **base,
                        "error_code": ErrorCode.unknown_topic_or_partition,
                        "error_message": f"Topic {r.resource_name} does not exist",
                        "configs": (),
                    }
                )
                continue
            entries = describe_topic(b.config, info.configs)
            read_only = False
        elif r.resource_type == BROKER:
            if r.resource_name not in ("", str(b.node_id)):
                results.append(
                    {
                        **base,
                        "error_code": ErrorCode.invalid_request,
                        "error_message": f"Unexpected broker id, expected {b.node_id} but received "
                        f"{r.resource_name}",
                        "configs": (),
                    }
                )
                continue
            entries = _broker_entries(ctx)
            read_only = True
        else:
            results.append(
                {
                    **base,
                    "error_code": ErrorCode.invalid_request,
                    "error_message": f"resource type {r.resource_type} is not supported",
                    "configs": (),
                }
            )
            continue
        wanted = set(r.configuration_keys) if r.configuration_keys is not None else None
        configs = []
        for name, value, source, typ, doc in entries:
            if wanted is not None and name not in wanted:
                continue
            synonyms = []
            if req.include_synonyms and r.resource_type == TOPIC:
                if source == ConfigSource.DYNAMIC_TOPIC_CONFIG:
                    synonyms.append({"name": name, "value": value, "source": int(source)})
                for bk in KEYS[name].broker_keys[:1]:
                    default = KEYS[name].default(b.config)
                    text = str(default).lower() if isinstance(default, bool) else str(default)
                    bsrc = (
                        ConfigSource.STATIC_BROKER_CONFIG
                        if bk in b.config.given
                        else ConfigSource.DEFAULT_CONFIG
                    )
                    synonyms.append({"name": bk, "value": text, "source": int(bsrc)})
            configs.append(
                {
                    "name": name,
                    "value": value,
                    "read_only": read_only,
                    "config_source": int(source),
                    "is_sensitive": False,
                    "synonyms": synonyms,
                    "config_type": int(typ),
                    "documentation": doc if getattr(req, "include_documentation", False) else None,
                }
            )
        results.append({**base, "error_code": ErrorCode.none, "error_message": None, "configs": configs})
    return ctx.respond(results=results)


def _denied(ctx: RequestContext, op: Operation, resource_type: int, name: str) -> ErrorCode | None:
    """Kafka checks topics as TOPIC resources and broker (logger) configs as the CLUSTER."""
    if resource_type == TOPIC:
        return None if authorize(ctx, op, topic(name)) else ErrorCode.topic_authorization_failed
    if resource_type in (BROKER, BROKER_LOGGER):
        return None if authorize(ctx, op, CLUSTER) else ErrorCode.cluster_authorization_failed
    return None


def _apply(
    ctx: RequestContext, resource_type: int, name: str, overrides: dict[str, str | None], validate_only: bool
) -> tuple[ErrorCode, str | None]:
    b = ctx.broker
    denied = _denied(ctx, Operation.ALTER_CONFIGS, resource_type, name)
    if denied is not None:
        return denied, None
    if resource_type == BROKER:
        return ErrorCode.invalid_request, "dynamic broker configs are not supported; edit server.properties"
    if resource_type != TOPIC:
        return ErrorCode.invalid_request, f"resource type {resource_type} is not supported"
    info = b.logs.topic(name)
    if info is None:
        return ErrorCode.unknown_topic_or_partition, f"Topic {name} does not exist"
    try:
        clean = validate_overrides(overrides)
        if not validate_only:
            b.logs.set_topic_configs(name, clean)
    except InvalidConfig as exc:
        return ErrorCode.invalid_config, str(exc)
    except UnknownTopic:
        return ErrorCode.unknown_topic_or_partition, f"Topic {name} does not exist"
    return ErrorCode.none, None


async def alter(ctx: RequestContext, req: AlterConfigsRequest) -> Any:
    """AlterConfigs replaces a topic's overrides with exactly the given set."""
    out = []
    for r in req.resources:
        error, message = _apply(
            ctx, r.resource_type, r.resource_name, {c.name: c.value for c in r.configs}, req.validate_only
        )
        out.append(
            {
                "error_code": error,
                "error_message": message,
                "resource_type": r.resource_type,
                "resource_name": r.resource_name,
            }
        )
    return ctx.respond(responses=out)


async def incremental_alter(ctx: RequestContext, req: IncrementalAlterConfigsRequest) -> Any:
    b = ctx.broker
    out = []
    for r in req.resources:
        info = b.logs.topic(r.resource_name) if r.resource_type == TOPIC else None
        current: dict[str, str | None] = dict(info.configs) if info else {}
        error, message = ErrorCode.none, None
        for c in r.configs:
            key = KEYS.get(c.name)
            if c.config_operation == SET:
                current[c.name] = c.value
            elif c.config_operation == DELETE:
                current.pop(c.name, None)
            elif c.config_operation in (APPEND, SUBTRACT):
                if key is None or key.type != ConfigType.LIST:
                    error, message = ErrorCode.invalid_config, f"{c.name} is not a list config"
                    break
                now = current.get(c.name) or str(key.default(b.config))
                items = [x for x in now.split(",") if x]
                for v in (c.value or "").split(","):
                    if c.config_operation == APPEND and v and v not in items:
                        items.append(v)
                    elif c.config_operation == SUBTRACT and v in items:
                        items.remove(v)
                current[c.name] = ",".join(items)
            else:
                error, message = ErrorCode.invalid_request, f"unknown config operation {c.config_operation}"
                break
        if error == ErrorCode.none:
            error, message = _apply(ctx, r.resource_type, r.resource_name, current, req.validate_only)
        out.append(
            {
                "error_code": error,
                "error_message": message,
                "resource_type": r.resource_type,
                "resource_name": r.resource_name,
            }
        )
    return ctx.respond(responses=out)
