"""The Elasticsearch contract server: mappings."""

from __future__ import annotations

import fnmatch
import ipaddress
import math
import re
from typing import TYPE_CHECKING, Any, Final

from tests.contract_servers.elasticsearch.dates import (
    _DEFAULT_DATE_FORMAT,
    _DEFAULT_DATE_PARSERS,
    _DateParser,
    _parse_date,
    _parse_date_format,
)
from tests.contract_servers.elasticsearch.errors import _bool_param, _java_str, _MappingError

if TYPE_CHECKING:
    from collections.abc import Callable


class _Malformed(Exception):
    """A value that does not fit its field: the ``caused_by`` of the document failure."""

    def __init__(self, cause_type: str, reason: str) -> None:
        super().__init__(reason)
        self.cause = {"type": cause_type, "reason": reason}


_INT_RANGES: Final = {
    "long": (-(2**63), 2**63 - 1, "a long"),
    "integer": (-(2**31), 2**31 - 1, "an integer"),
    "short": (-(2**15), 2**15 - 1, "a short"),
    "byte": (-(2**7), 2**7 - 1, "a byte"),
    "unsigned_long": (0, 2**64 - 1, "an unsigned_long"),
}
_FLOAT_LIMITS: Final = {
    "double": 1.7976931348623157e308,
    "float": 3.4028234663852886e38,
    "half_float": 65504.0,
    "scaled_float": 1.7976931348623157e308,
}
_KEYWORDS: Final = frozenset({"keyword", "constant_keyword", "wildcard", "version"})
_TEXTS: Final = frozenset({"text", "match_only_text", "search_as_you_type", "annotated_text"})
# Types whose values may be JSON objects (points, shapes, ranges, feature maps...).
_OBJECT_VALUED: Final = frozenset(
    {
        "flattened",
        "geo_point",
        "geo_shape",
        "point",
        "shape",
        "integer_range",
        "long_range",
        "float_range",
        "double_range",
        "date_range",
        "ip_range",
        "histogram",
        "aggregate_metric_double",
        "rank_features",
        "sparse_vector",
        "join",
        "percolator",
        "completion",
        "semantic_text",
    }
)
_KNOWN_TYPES: Final = frozenset(
    set(_INT_RANGES)
    | set(_FLOAT_LIMITS)
    | _KEYWORDS
    | _TEXTS
    | _OBJECT_VALUED
    | {
        "date",
        "date_nanos",
        "boolean",
        "binary",
        "ip",
        "dense_vector",
        "rank_feature",
        "alias",
        "token_count",
        "counted_keyword",
        "murmur3",
        "object",
        "nested",
    }
)
# ``ignore_malformed`` only applies to these (as in Elasticsearch).
_MALFORMABLE: Final = frozenset(
    set(_INT_RANGES) | set(_FLOAT_LIMITS) | {"date", "date_nanos", "ip", "geo_point"}
)
_NUMERIC_TEXT = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")
_BASE64 = re.compile(r"[A-Za-z0-9+/\s]*={0,2}\s*")


class _Field:
    """A leaf field mapping; ``defn`` is what ``GET _mapping`` shows for it."""

    __slots__ = (
        "check",
        "coerce",
        "const",
        "defn",
        "fields",
        "formats",
        "ignore_above",
        "ignore_malformed",
        "special",
        "sub_checks",
        "type",
    )

    def __init__(self, type_: str, defn: dict[str, Any]) -> None:
        self.type = type_
        self.defn = defn
        self.check: Callable[[_Field, Any], None] | None = _CHECKS.get(type_)
        self.formats: tuple[_DateParser, ...] = _DEFAULT_DATE_PARSERS
        self.fields: dict[str, _Field] = {}
        self.ignore_malformed = False
        self.coerce = True
        self.ignore_above: int | None = None
        self.const: str | None = None
        # constant_keyword may update the mapping, so it always takes the general path
        self.special = type_ == "constant_keyword"
        # whether a multi-field can refuse a value its parent accepted (a text field's keyword cannot)
        self.sub_checks = False


class _Object:
    """An ``object`` / ``nested`` mapping (the root is one too)."""

    __slots__ = ("dynamic", "enabled", "extra", "nested", "properties")

    def __init__(self, nested: bool = False) -> None:
        self.nested = nested
        self.properties: dict[str, _Field | _Object] = {}
        self.dynamic: str | None = None
        self.enabled = True
        self.extra: dict[str, Any] = {}


_Mapper = _Field | _Object


def _check_integer(field: _Field, value: Any) -> None:
    kind = type(value)
    if kind is int:
        number = value
    elif kind is float:
        if not field.coerce and not value.is_integer():
            raise _Malformed("illegal_argument_exception", f"Value [{value}] has a decimal part")
        number = math.trunc(value)
    elif kind is str:
        if not value:
            return
        if not _NUMERIC_TEXT.fullmatch(value):
            raise _Malformed("illegal_argument_exception", f'For input string: "{value}"')
        if not field.coerce:
            raise _Malformed("illegal_argument_exception", f"[coerce] is false, cannot parse [{value}]")
        try:
            number = int(value)
        except ValueError:
            as_float = float(value)
            if not math.isfinite(as_float):
                raise _Malformed("illegal_argument_exception", f'For input string: "{value}"') from None
            number = math.trunc(as_float)
    else:
        raise _Malformed("illegal_argument_exception", f'For input string: "{_java_str(value)}"')
    low, high, name = _INT_RANGES[field.type]
    if not low <= number <= high:
        raise _Malformed("illegal_argument_exception", f"Value [{value}] is out of range for {name}")


def _check_float(field: _Field, value: Any) -> None:
    kind = type(value)
    if kind is int or kind is float:
        number = float(value)
    elif kind is str:
        if not value:
            return
        if not _NUMERIC_TEXT.fullmatch(value):
            raise _Malformed("number_format_exception", f'For input string: "{value}"')
        if not field.coerce:
            raise _Malformed("illegal_argument_exception", f"[coerce] is false, cannot parse [{value}]")
        number = float(value)
    else:
        raise _Malformed("number_format_exception", f'For input string: "{_java_str(value)}"')
    if not math.isfinite(number) or abs(number) > _FLOAT_LIMITS[field.type]:
        raise _Malformed(
            "illegal_argument_exception", f"[{field.type}] supports only finite values, but got [{value}]"
        )


def _check_boolean(field: _Field, value: Any) -> None:
    if value is True or value is False or value in ("true", "false", ""):
        return
    raise _Malformed(
        "illegal_argument_exception",
        f"Failed to parse value [{_java_str(value)}] as only [true] or [false] are allowed.",
    )


def _check_date(field: _Field, value: Any) -> None:
    if _parse_date(value, field.formats) is None:
        spec = field.defn.get("format", _DEFAULT_DATE_FORMAT)
        raise _Malformed(
            "illegal_argument_exception",
            f"failed to parse date field [{_java_str(value)}] with format [{spec}]",
        )


def _check_ip(field: _Field, value: Any) -> None:
    if isinstance(value, str):
        try:
            ipaddress.ip_address(value)
            return
        except ValueError:
            pass
    raise _Malformed("illegal_argument_exception", f"'{_java_str(value)}' is not an IP string literal.")


def _check_binary(field: _Field, value: Any) -> None:
    if not isinstance(value, str) or not _BASE64.fullmatch(value):
        raise _Malformed("illegal_argument_exception", "Illegal base64 character")


def _check_number_only(field: _Field, value: Any) -> None:
    if type(value) not in (int, float):
        raise _Malformed(
            "illegal_argument_exception", f"[{field.type}] expects numbers, got [{_java_str(value)}]"
        )


_CHECKS: dict[str, Callable[[_Field, Any], None]] = {
    **dict.fromkeys(_INT_RANGES, _check_integer),
    **dict.fromkeys(_FLOAT_LIMITS, _check_float),
    "boolean": _check_boolean,
    "date": _check_date,
    "date_nanos": _check_date,
    "ip": _check_ip,
    "binary": _check_binary,
    "dense_vector": _check_number_only,
    "rank_feature": _check_number_only,
}


class _MapOpts:
    """Index-level defaults a field mapping inherits."""

    __slots__ = ("coerce", "ignore_malformed")

    def __init__(self, ignore_malformed: bool = False, coerce: bool = True) -> None:
        self.ignore_malformed = ignore_malformed
        self.coerce = coerce


def _dynamic_value(value: Any, where: str) -> str:
    if value is True or value == "true":
        return "true"
    if value is False or value == "false":
        return "false"
    if value in ("strict", "runtime"):
        return str(value)
    raise _MappingError(f"Unknown value [{_java_str(value)}] for [dynamic] on [{where}]")


def _build_mapper(name: str, defn: Any, path: str, opts: _MapOpts) -> _Mapper:
    if not isinstance(defn, dict):
        raise _MappingError(
            f"Expected map for property [fields] on field [{path}] but got a {type(defn).__name__}"
        )
    kind = defn.get("type")
    if kind is None or kind in ("object", "nested"):
        obj = _Object(nested=kind == "nested")
        for key, value in defn.items():
            if key == "properties":
                if not isinstance(value, dict):
                    raise _MappingError(f"Expected map for property [properties] on field [{path}]")
                for child, child_defn in value.items():
                    _add_property(obj, child, child_defn, path + ".", opts)
            elif key == "dynamic":
                obj.dynamic = _dynamic_value(value, path)
            elif key == "enabled":
                obj.enabled = bool(_bool_param(value, "enabled"))
            elif key != "type":
                obj.extra[key] = value
        return obj
    if not isinstance(kind, str) or kind not in _KNOWN_TYPES:
        raise _MappingError(f"No handler for type [{kind}] declared on field [{name}]")
    if kind == "scaled_float" and "scaling_factor" not in defn:
        raise _MappingError(f"Field [scaling_factor] is required on field [{name}]")
    field = _Field(kind, dict(defn))
    if kind in ("date", "date_nanos") and "format" in defn:
        field.formats = _parse_date_format(str(defn["format"]))
    if kind in _MALFORMABLE:
        field.ignore_malformed = bool(_bool_param(defn.get("ignore_malformed", opts.ignore_malformed), "x"))
    field.coerce = bool(_bool_param(defn.get("coerce", opts.coerce), "coerce"))
    if "ignore_above" in defn:
        field.ignore_above = int(defn["ignore_above"])
    if kind == "constant_keyword" and defn.get("value") is not None:
        field.const = str(defn["value"])
    subs = defn.get("fields")
    if subs is not None:
        if not isinstance(subs, dict):
            raise _MappingError(f"Expected map for property [fields] on field [{name}]")
        for sub_name, sub_defn in subs.items():
            sub = _build_mapper(sub_name, sub_defn, f"{path}.{sub_name}", opts)
            if isinstance(sub, _Object):
                raise _MappingError(f"Type [{sub_defn.get('type', 'object')}] cannot be used in multi field")
            field.fields[sub_name] = sub
            field.sub_checks = field.sub_checks or sub.check is not None or sub.sub_checks
    return field


def _add_property(obj: _Object, key: str, defn: Any, prefix: str, opts: _MapOpts) -> None:
    """Adds ``key`` to ``obj``; dotted names become object paths, as Elasticsearch expands them."""
    if not key or not key.strip():
        raise _MappingError("field name cannot be an empty string")
    parts = key.split(".")
    if any(not part for part in parts):
        raise _MappingError(f"field name [{key}] cannot contain only dots or empty path segments")
    for part in parts[:-1]:
        child = obj.properties.get(part)
        if child is None:
            child = _Object()
            obj.properties[part] = child
        elif isinstance(child, _Field):
            raise _MappingError(f"can't merge a non object mapping [{prefix}{part}] with an object mapping")
        obj = child
        prefix += part + "."
    leaf = parts[-1]
    mapper = _build_mapper(leaf, defn, prefix + leaf, opts)
    existing = obj.properties.get(leaf)
    if existing is None:
        obj.properties[leaf] = mapper
    else:
        _merge_mapper(obj, leaf, existing, mapper, prefix + leaf, replace=True)


_UPDATABLE_PARAMS: Final = frozenset({"ignore_above", "meta", "ignore_malformed", "fields", "type"})


def _merge_mapper(parent: _Object, key: str, old: _Mapper, new: _Mapper, path: str, *, replace: bool) -> None:
    """Merges ``new`` into ``parent.properties[key]`` (currently ``old``).

    ``replace`` (template composition) lets later definitions win, as composable templates
    do; otherwise the rules of the put-mapping API apply."""
    if isinstance(old, _Object) and isinstance(new, _Object):
        if old.nested != new.nested and not replace:
            first, second = ("nested", "non-nested") if old.nested else ("non-nested", "nested")
            raise _MappingError(f"can't merge a {second} mapping [{path}] with a {first} mapping")
        if old.enabled != new.enabled and not replace:
            raise _MappingError(f"the [enabled] parameter can't be updated for the object mapping [{path}]")
        if replace:
            old.nested = new.nested
            old.enabled = new.enabled
        if new.dynamic is not None:
            old.dynamic = new.dynamic
        old.extra.update(new.extra)
        for child, mapper in new.properties.items():
            current = old.properties.get(child)
            if current is None:
                old.properties[child] = mapper
            else:
                _merge_mapper(old, child, current, mapper, f"{path}.{child}", replace=replace)
        return
    if replace:
        parent.properties[key] = new
        return
    if isinstance(old, _Object) or isinstance(new, _Object):
        raise _MappingError(f"can't merge a non object mapping [{path}] with an object mapping")
    if old.type != new.type:
        raise _MappingError(f"mapper [{path}] cannot be changed from type [{old.type}] to [{new.type}]")
    conflicts = [
        f"Cannot update parameter [{param}] from [{_java_str(old.defn.get(param))}] to [{_java_str(value)}]"
        for param, value in new.defn.items()
        if param not in _UPDATABLE_PARAMS and old.defn.get(param) != value
    ]
    if conflicts:
        raise _MappingError(
            f"Mapper for [{path}] conflicts with existing mapper:\n\t" + "\n\t".join(conflicts)
        )
    merged_defn = {**old.defn, **{k: v for k, v in new.defn.items() if k != "fields"}}
    fields = dict(old.fields)
    for sub_name, sub in new.fields.items():
        current_sub = fields.get(sub_name)
        if current_sub is not None and current_sub.type != sub.type:
            raise _MappingError(
                f"mapper [{path}.{sub_name}] cannot be changed from type [{current_sub.type}] to [{sub.type}]"
            )
        fields[sub_name] = sub
    if fields:
        merged_defn["fields"] = {
            name: {
                **(old.defn.get("fields") or {}).get(name, {}),
                **(new.defn.get("fields") or {}).get(name, {}),
            }
            for name in fields
        }
    merged = _Field(old.type, merged_defn)
    for slot in ("formats", "ignore_malformed", "coerce", "const", "check", "special"):
        setattr(merged, slot, getattr(new, slot))
    merged.ignore_above = new.ignore_above if new.ignore_above is not None else old.ignore_above
    merged.fields = fields
    merged.sub_checks = any(sub.check is not None or sub.sub_checks for sub in fields.values())
    parent.properties[key] = merged


def _render_mapper(mapper: _Mapper) -> dict[str, Any]:
    if isinstance(mapper, _Field):
        return mapper.defn
    out: dict[str, Any] = {}
    if mapper.nested:
        out["type"] = "nested"
    if mapper.dynamic is not None:
        out["dynamic"] = mapper.dynamic
    if not mapper.enabled:
        out["enabled"] = False
    out.update(mapper.extra)
    if mapper.properties:
        out["properties"] = {k: _render_mapper(mapper.properties[k]) for k in sorted(mapper.properties)}
    return out or {"type": "object"}


def _count_fields(mapper: _Mapper) -> int:
    if isinstance(mapper, _Field):
        return 1 + len(mapper.fields)
    return 1 + sum(_count_fields(child) for child in mapper.properties.values())


def _copy_mapper(mapper: _Mapper) -> _Mapper:
    if isinstance(mapper, _Field):
        return mapper  # fields are replaced, never changed in place
    copy = _Object(mapper.nested)
    copy.dynamic, copy.enabled, copy.extra = mapper.dynamic, mapper.enabled, dict(mapper.extra)
    copy.properties = {k: _copy_mapper(v) for k, v in mapper.properties.items()}
    return copy


_ROOT_PARAMS: Final = frozenset(
    {
        "dynamic",
        "date_detection",
        "numeric_detection",
        "dynamic_templates",
        "dynamic_date_formats",
        "_source",
        "_meta",
        "_routing",
        "_data_stream_timestamp",
        "runtime",
        "subobjects",
        "_field_names",
        "enabled",
    }
)


class _Mapping:
    """An index's mapping: the root object plus root-only parameters."""

    def __init__(self) -> None:
        self.root = _Object()
        self.params: dict[str, Any] = {}
        self.date_detection = True
        self.numeric_detection = False
        self.templates: list[tuple[str, dict[str, Any]]] = []

    def copy(self) -> _Mapping:
        other = _Mapping()
        root = _copy_mapper(self.root)
        assert isinstance(root, _Object)
        other.root = root
        other.params = dict(self.params)
        other.date_detection, other.numeric_detection = self.date_detection, self.numeric_detection
        other.templates = list(self.templates)
        return other

    def apply(self, defn: Any, opts: _MapOpts, *, replace: bool) -> None:
        """Merges a mapping definition in (put-mapping rules unless ``replace``)."""
        if not isinstance(defn, dict):
            raise _MappingError("Expected map for [mappings]")
        if "_doc" in defn and len(defn) == 1 and isinstance(defn["_doc"], dict):
            raise _MappingError(
                "The mapping definition cannot be nested under a type [_doc] unless include_type_name is "
                "set to true."
            )
        incoming = _Object()
        for key, value in defn.items():
            if key == "properties":
                if not isinstance(value, dict):
                    raise _MappingError("Expected map for property [properties]")
                for child, child_defn in value.items():
                    _add_property(incoming, child, child_defn, "", opts)
            elif key == "dynamic":
                self.root.dynamic = _dynamic_value(value, "_doc")
                self.params["dynamic"] = self.root.dynamic
            elif key == "date_detection":
                self.date_detection = _bool_param(value, key)
                self.params[key] = self.date_detection
            elif key == "numeric_detection":
                self.numeric_detection = _bool_param(value, key)
                self.params[key] = self.numeric_detection
            elif key == "dynamic_templates":
                self.templates = _parse_dynamic_templates(value)
                self.params[key] = value
            elif key in _ROOT_PARAMS:
                self.params[key] = value
            else:
                raise _MappingError(f"Root mapping definition has unsupported parameters:  [{key} : {value}]")
        for child, mapper in incoming.properties.items():
            current = self.root.properties.get(child)
            if current is None:
                self.root.properties[child] = mapper
            else:
                _merge_mapper(self.root, child, current, mapper, child, replace=replace)

    def render(self) -> dict[str, Any]:
        out = dict(self.params)
        if self.root.properties:
            out["properties"] = {
                k: _render_mapper(self.root.properties[k]) for k in sorted(self.root.properties)
            }
        return out

    def field_count(self) -> int:
        return sum(_count_fields(m) for m in self.root.properties.values())

    def lookup(self, path: str) -> tuple[_Mapper | None, str]:
        """The mapper of ``path`` (multi-fields included) and the source path its values come from."""
        parts = path.split(".")
        current: _Mapper = self.root
        for i, part in enumerate(parts):
            if isinstance(current, _Field):
                if i == len(parts) - 1 and part in current.fields:
                    return current.fields[part], ".".join(parts[:i])
                return None, path
            child = current.properties.get(part)
            if child is None:
                return None, path
            current = child
        return current, path


def _parse_dynamic_templates(value: Any) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(value, list):
        raise _MappingError("Dynamic template syntax error. An array of named objects is expected.")
    out: list[tuple[str, dict[str, Any]]] = []
    for entry in value:
        if not isinstance(entry, dict) or len(entry) != 1:
            raise _MappingError("Dynamic template syntax error. An array of named objects is expected.")
        ((name, body),) = entry.items()
        if not isinstance(body, dict) or not isinstance(body.get("mapping", body.get("runtime")), dict):
            raise _MappingError(f"Dynamic template [{name}] must have a [mapping] object")
        out.append((name, body))
    return out


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _template_matches(body: dict[str, Any], key: str, path: str, kind: str) -> bool:
    types = _as_list(body.get("match_mapping_type"))
    if types and "*" not in types and kind not in types:
        return False
    if kind in _as_list(body.get("unmatch_mapping_type")):
        return False

    def any_match(patterns: list[Any], text: str, regex: bool) -> bool:
        if regex:
            return any(re.fullmatch(str(p), text) for p in patterns)
        return any(fnmatch.fnmatchcase(text, str(p)) for p in patterns)

    regex = body.get("match_pattern") == "regex"
    if "match" in body and not any_match(_as_list(body["match"]), key, regex):
        return False
    if "unmatch" in body and any_match(_as_list(body["unmatch"]), key, regex):
        return False
    if "path_match" in body and not any_match(_as_list(body["path_match"]), path, False):
        return False
    return not ("path_unmatch" in body and any_match(_as_list(body["path_unmatch"]), path, False))


def _fill_placeholders(value: Any, name: str, dynamic_type: str) -> Any:
    if isinstance(value, str):
        return value.replace("{name}", name).replace("{dynamic_type}", dynamic_type)
    if isinstance(value, dict):
        return {k: _fill_placeholders(v, name, dynamic_type) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_placeholders(v, name, dynamic_type) for v in value]
    return value


_DEFAULT_DYNAMIC_TYPE: Final = {
    "string": "text",
    "long": "long",
    "double": "float",
    "boolean": "boolean",
    "date": "date",
    "object": "object",
}
