"""Plugin configuration as pydantic models with Kafka's dotted key names.

A connector, task, transform or converter declares its settings as a model::

    class Config(ConnectorConfig):
        file: str | None = Field(None, alias="file", description="File to read; stdin when unset.")
        topic: str = Field(alias="topic", description="Topic to write to.",
                           json_schema_extra=importance("HIGH"))
        batch_size: int = Field(2000, alias="batch.size", ge=1, description="Lines per poll.")

and reads them with ``Config.parse(props)``. Values arrive as strings (from
``.properties`` files and the REST API) and are converted by pydantic; lists use
``CommaList`` (Kafka's comma-separated lists) and passwords ``SecretStr``. The same
model answers ``GET /connector-plugins/{plugin}/config`` and the per-key errors of
``PUT /connector-plugins/{plugin}/config/validate``.

Keys a model does not declare are kept (``extra="allow"``): connector configs hold
the framework's shared keys too, and forwarded settings such as ``*.converter.*``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, SecretStr, ValidationError

from connect.api.errors import ConnectException

Importance = Literal["HIGH", "MEDIUM", "LOW"]


def _split_commas(value: Any) -> Any:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


CommaList = Annotated[list[str], BeforeValidator(_split_commas)]
"""Kafka's LIST type: a comma-separated string (or a list) of trimmed, non-empty items."""


def _kafka_boolean(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError("Expected value to be either true or false")


Boolean = Annotated[bool, BeforeValidator(_kafka_boolean)]


def lower_case(value: Any) -> Any:
    """For ``BeforeValidator``: enumerated keys Kafka compares case-insensitively
    (``IGNORE`` or ``ignore``), trimmed and lower-cased before the ``Literal`` check."""
    return value.strip().lower() if isinstance(value, str) else value


def upper_case(value: Any) -> Any:
    """For ``BeforeValidator``: like ``lower_case``, for choices written in upper case."""
    return value.strip().upper() if isinstance(value, str) else value


"""Kafka's BOOLEAN type: ``true`` or ``false`` in any case, nothing else (pydantic's own
``bool`` would also take ``yes``, ``on`` or ``1``)."""


def importance(
    level: Importance,
    *,
    group: str | None = None,
    display_name: str | None = None,
    width: Literal["NONE", "SHORT", "MEDIUM", "LONG"] = "NONE",
    kafka_type: str | None = None,
) -> dict[str, Any]:
    """Extra metadata of a config key for Kafka's ``ConfigKeyInfo`` (use as ``json_schema_extra``)."""
    extra: dict[str, Any] = {"importance": level, "width": width}
    if group:
        extra["group"] = group
    if display_name:
        extra["display_name"] = display_name
    if kafka_type:
        extra["kafka_type"] = kafka_type
    return extra


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """A problem with one config key, in Kafka's terms: the key's name and a message."""

    key: str
    message: str


class ConfigValidationError(ConnectException):
    """A config has problems; ``issues`` names each key with its message."""

    def __init__(self, issues: list[ConfigIssue], source: str = "") -> None:
        self.issues = issues
        where = f" in {source}" if source else ""
        lines = "; ".join(f"{i.key}: {i.message}" for i in issues)
        super().__init__(f"Invalid configuration{where}: {lines}")


class ConfigModel(BaseModel):
    """Base of every configuration model: Kafka names as aliases, unknown keys kept."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True, str_strip_whitespace=True)

    @classmethod
    def parse(cls, props: Mapping[str, Any]) -> Self:
        """Validate ``props`` (string values welcome); raises ``ConfigValidationError``."""
        problems = cls.problems(props)
        try:
            config = cls.model_validate(dict(props))
        except ValidationError as exc:
            raise ConfigValidationError(issues_from(cls, exc) + problems) from None
        if problems:
            raise ConfigValidationError(problems)
        return config

    @classmethod
    def issues(cls, props: Mapping[str, Any], prefix: str = "") -> list[ConfigIssue]:
        """Problems of ``props`` without raising (what config/validate reports); keys and
        messages name each key with ``prefix`` in front (``transforms.<alias>.``)."""
        found = [
            ConfigIssue(
                prefix + i.key,
                # "Invalid value x for configuration k: ..." names the key as the caller sees it.
                i.message.replace(f" for configuration {i.key}:", f" for configuration {prefix}{i.key}:", 1)
                if prefix
                else i.message,
            )
            for i in cls.problems(props)
        ]
        try:
            cls.model_validate(dict(props))
        except ValidationError as exc:
            return issues_from(cls, exc, prefix) + found
        return found

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        """Checks across keys, on the raw values, each reported against the key it
        concerns. Override this instead of writing a pydantic model validator: those
        errors belong to no key, and do not run when another key is already invalid."""
        return []

    def get(self, key: str, default: Any = None) -> Any:
        """A value by Kafka key (declared or extra)."""
        for name, f in type(self).model_fields.items():
            if (f.alias or name) == key:
                value = getattr(self, name)
                return value.get_secret_value() if isinstance(value, SecretStr) else value
        return (self.model_extra or {}).get(key, default)

    def originals(self) -> dict[str, Any]:
        """Every key as given, declared and extra, by Kafka name."""
        out = {}
        for name, f in type(self).model_fields.items():
            if name in self.model_fields_set:
                out[f.alias or name] = getattr(self, name)
        out.update(self.model_extra or {})
        return out

    def with_prefix(self, prefix: str, strip: bool = True) -> dict[str, Any]:
        """Extra keys starting with ``prefix`` (Kafka's ``originalsWithPrefix``)."""
        return {
            (k[len(prefix) :] if strip else k): v
            for k, v in (self.model_extra or {}).items()
            if k.startswith(prefix)
        }


def issues_from(model: type[BaseModel], exc: ValidationError, prefix: str = "") -> list[ConfigIssue]:
    """pydantic errors, keyed by the Kafka name of the field each belongs to."""
    by_name = {name: (f.alias or name) for name, f in model.model_fields.items()}
    issues = []
    for err in exc.errors():
        loc = err.get("loc") or ()
        first = str(loc[0]) if loc else ""
        key = prefix + by_name.get(first, first)
        message = err.get("msg", "invalid value")
        if err.get("type") == "value_error":
            # The validator's own words, without pydantic's "Value error, " in front.
            message = str((err.get("ctx") or {}).get("error", message))
        if err.get("type") == "missing":
            message = f'Missing required configuration "{key}" which has no default value.'
        elif "input" in err and err.get("type") != "missing":
            shown = "[hidden]" if _is_secret(model, first) else err["input"]
            if isinstance(shown, str):
                shown = shown.strip()  # the value as validated (strings are trimmed, as Kafka trims)
            message = f"Invalid value {shown} for configuration {key}: {message}"
        issues.append(ConfigIssue(key, message))
    return issues


def _is_secret(model: type[BaseModel], name: str) -> bool:
    f = model.model_fields.get(name)
    return f is not None and "SecretStr" in str(f.annotation)


class ConnectorConfig(ConfigModel):
    """Base of a connector's own settings model (the runtime validates the shared keys)."""
