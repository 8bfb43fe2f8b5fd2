"""Validating a connector configuration as a whole: shared keys, transforms, predicates,
converters, client overrides and the connector's own keys, with every problem
reported against the key it belongs to (what ``config/validate`` returns and what
creating or updating a connector refuses with)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect.api.config import ConfigIssue, ConfigValidationError
from connect.api.connector import (
    Connector,
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SinkConnector,
    SourceConnector,
)
from connect.api.errors import ConnectException
from connect.runtime.config import DistributedConfig, WorkerConfig, runtime_config_model
from connect.runtime.config_info import KeyDef, config_infos, key_defs, synthetic
from connect.runtime.plugins import PluginNotFound, Plugins, PluginType
from connect.runtime.topic_creation import TopicCreation, TopicCreationError


class BadRequest(ConnectException):
    """The request cannot be validated at all (400): no or unknown connector class."""


@dataclass(slots=True)
class Validation:
    infos: dict[str, Any]
    connector_class: type[Connector]

    @property
    def error_count(self) -> int:
        return int(self.infos["error_count"])

    def issues(self) -> list[tuple[str, str]]:
        """(key, message) of every problem."""
        return [(c["value"]["name"], e) for c in self.infos["configs"] for e in c["value"]["errors"]]


# Settings a connector may override in its clients under each policy (Kafka's
# ConnectorClientConfigOverridePolicy implementations).
_PRINCIPAL_KEYS = {"sasl.jaas.config", "sasl.mechanism", "security.protocol"}


def validate(plugins: Plugins, worker: WorkerConfig, config: Mapping[str, str]) -> Validation:
    connector_name = config.get("connector.class")
    if not connector_name:
        raise BadRequest(
            "Connector config {} contains no connector type".format(
                "{" + ", ".join(f"{k}={v}" for k, v in config.items()) + "}"
            )
        )
    try:
        cls = plugins.connector_class(connector_name)
    except PluginNotFound as exc:
        raise BadRequest(str(exc)) from None

    runtime_model = runtime_config_model(cls)
    defs: list[KeyDef] = key_defs(runtime_model)
    issues: list[ConfigIssue] = list(runtime_model.issues(config))

    aliases = _list(config.get("transforms"))
    predicates = _list(config.get("predicates"))
    for alias in predicates:
        defs_p, issues_p = _plugin_keys(
            plugins, config, f"predicates.{alias}.", (PluginType.PREDICATE,), "Predicates"
        )
        defs += defs_p
        issues += issues_p
    for alias in aliases:
        prefix = f"transforms.{alias}."
        defs_t, issues_t = _plugin_keys(
            plugins, config, prefix, (PluginType.TRANSFORMATION,), "Transforms", allow_functions=True
        )
        defs += defs_t
        issues += issues_t
        defs.append(
            synthetic(
                prefix + "predicate",
                "The alias of a predicate used to determine whether to apply this transformation.",
                "Transforms",
                required=False,
            )
        )
        defs.append(
            synthetic(
                prefix + "negate",
                "Whether the configured predicate should be negated.",
                "Transforms",
                required=False,
                typ="BOOLEAN",
            )
        )
        pred = config.get(prefix + "predicate")
        if pred and pred not in predicates:
            issues.append(
                ConfigIssue(
                    prefix + "predicate",
                    f"Invalid value {pred} for configuration {prefix}predicate: "
                    f"the predicate must be one of {predicates}",
                )
            )
        negate = config.get(prefix + "negate")
        if negate is not None and negate.strip().lower() not in ("true", "false"):
            issues.append(
                ConfigIssue(
                    prefix + "negate",
                    f"Invalid value {negate} for configuration {prefix}negate: must be true or false",
                )
            )
        if negate is not None and not pred:
            issues.append(ConfigIssue(prefix + "negate", "negate has no effect without a predicate"))

    for kind, kinds in (
        ("key", (PluginType.CONVERTER,)),
        ("value", (PluginType.CONVERTER,)),
        ("header", (PluginType.HEADER_CONVERTER, PluginType.CONVERTER)),
    ):
        name = config.get(f"{kind}.converter")
        if name:
            try:
                plugins.find(name, kinds)
            except PluginNotFound as exc:
                issues.append(ConfigIssue(f"{kind}.converter", str(exc)))

    issues += _override_issues(worker, config)
    if not issubclass(cls, SinkConnector):
        groups = _list(config.get("topic.creation.groups"))
        try:
            TopicCreation.from_config(config, groups)
        except TopicCreationError as exc:
            issues.append(ConfigIssue(exc.key, exc.detail))

    connector = cls()
    defs += key_defs(cls.Config, group=None)
    try:
        issues += connector.validate(dict(config))
    except Exception as exc:  # a connector's validate must not take the request down
        issues.append(ConfigIssue("connector.class", f"validation by {cls.__name__} failed: {exc}"))
    if isinstance(connector, SourceConnector) and isinstance(worker, DistributedConfig):
        # Only distributed workers run exactly-once sources (Kafka's DistributedHerder checks).
        keys_in_error = {i.key for i in issues}
        issues += exactly_once_issues(connector, worker, config, keys_in_error)
    return Validation(config_infos(connector_name, defs, config, issues), cls)


def exactly_once_issues(
    connector: SourceConnector, worker: DistributedConfig, config: Mapping[str, str], keys_in_error: set[str]
) -> list[ConfigIssue]:
    """Kafka's preflight checks of ``exactly.once.support=required`` and
    ``transaction.boundary=connector`` (``DistributedHerder.validateSourceConnector*``), with
    its messages; a key whose value is already invalid is not checked again."""
    issues = []
    level = str(config.get("exactly.once.support") or "requested").strip().lower()
    if "exactly.once.support" not in keys_in_error and level == "required":
        key = "exactly.once.support"
        if worker.exactly_once_source_support != "enabled":
            issues.append(ConfigIssue(key, "This worker does not have exactly-once source support enabled."))
        try:
            support = connector.exactly_once_support(dict(config))
            if support is None:
                issues.append(
                    ConfigIssue(
                        key,
                        "The connector does not implement the API required for preflight validation of "
                        "exactly-once source support. Please consult the documentation for the connector to "
                        "determine whether it supports exactly-once semantics, and then consider "
                        'reconfiguring the connector to use the value "requested" for this property (which '
                        "will disable this preflight check and allow the connector to be created).",
                    )
                )
            elif support is not ExactlyOnceSupport.SUPPORTED:
                issues.append(
                    ConfigIssue(
                        key,
                        "The connector does not support exactly-once semantics with the provided "
                        "configuration.",
                    )
                )
        except Exception as exc:
            issues.append(ConfigIssue(key, _unexpected(exc)))
    boundary = str(config.get("transaction.boundary") or "poll").strip().lower()
    if "transaction.boundary" not in keys_in_error and boundary == "connector":
        key = "transaction.boundary"
        try:
            boundaries = connector.can_define_transaction_boundaries(dict(config))
            if boundaries is None:
                issues.append(
                    ConfigIssue(
                        key,
                        "This connector has returned a null value from its canDefineTransactionBoundaries "
                        "method, which is not permitted. The connector will be treated as if it cannot "
                        "define its own transaction boundaries, and cannot be configured with "
                        "'transaction.boundary' set to 'connector'.",
                    )
                )
            elif boundaries is not ConnectorTransactionBoundaries.SUPPORTED:
                issues.append(
                    ConfigIssue(
                        key,
                        "The connector does not support connector-defined transaction boundaries with the "
                        "given configuration. Please reconfigure it to use a different transaction boundary "
                        "definition.",
                    )
                )
        except Exception as exc:
            issues.append(ConfigIssue(key, _unexpected(exc)))
    return issues


def _unexpected(exc: Exception) -> str:
    detail = str(exc).strip()
    if detail:
        return f"An unexpected error occurred during validation: {detail}"
    return "An unexpected error occurred during validation; please see the worker logs for more details."


def _list(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _plugin_keys(
    plugins: Plugins,
    config: Mapping[str, str],
    prefix: str,
    kinds: tuple[PluginType, ...],
    group: str,
    allow_functions: bool = False,
) -> tuple[list[KeyDef], list[ConfigIssue]]:
    type_key = prefix + "type"
    defs = [
        synthetic(type_key, "Class for the " + prefix.split(".")[0][:-1] + " " + prefix.split(".")[1], group)
    ]
    name = config.get(type_key)
    if not name:
        return defs, [
            ConfigIssue(type_key, f'Missing required configuration "{type_key}" which has no default value.')
        ]
    try:
        desc = plugins.find(name, kinds)
    except PluginNotFound as exc:
        if allow_functions and plugins._function(name) is not None:  # a plain function transformation
            return defs, []
        return defs, [ConfigIssue(type_key, str(exc))]
    model = getattr(desc.cls, "Config", None)
    if model is None:
        return defs, []
    settings = {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix) and k != type_key}
    issues = model.issues(settings, prefix=prefix)
    if not issues:
        issues = _configure_issues(desc.cls, settings, prefix, type_key)
    return defs + key_defs(model, prefix=prefix, group=group), issues


def _configure_issues(
    cls: type, settings: Mapping[str, str], prefix: str, type_key: str
) -> list[ConfigIssue]:
    """Configure a throwaway instance: what a plugin checks beyond its config model is
    refused now, at validation, rather than when the first task starts."""
    try:
        instance = cls()
        instance.configure(dict(settings))
        instance.close()
    except ConfigValidationError as exc:
        return [ConfigIssue(prefix + i.key, i.message) for i in exc.issues]
    except Exception as exc:
        return [ConfigIssue(type_key, f"{cls.__name__} refused its configuration: {exc}")]
    return []


def _override_issues(worker: WorkerConfig, config: Mapping[str, str]) -> list[ConfigIssue]:
    policy = worker.connector_client_config_override_policy
    issues = []
    for key in config:
        for client in ("producer", "consumer", "admin"):
            prefix = f"{client}.override."
            if key.startswith(prefix):
                setting = key[len(prefix) :]
                if policy == "None" or (policy == "Principal" and setting not in _PRINCIPAL_KEYS):
                    issues.append(
                        ConfigIssue(
                            key,
                            f"The '{policy}' policy does not allow '{setting}' to be "
                            "overridden in the connector configuration.",
                        )
                    )
    return issues
