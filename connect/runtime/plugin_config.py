"""A plugin's config definitions: which models describe its keys, in which order.

``GET /connector-plugins/{plugin}/config`` serves ``plugin_key_defs``, and the generated
reference (``python -m sluiceway.reference``) documents the same two models, so the
documentation cannot say anything the REST API does not.
"""

from __future__ import annotations

from pydantic import BaseModel

from connect.runtime.config import runtime_config_model
from connect.runtime.config_info import KeyDef, key_defs
from connect.runtime.plugins import PluginDesc, PluginType

_CONNECTORS = (PluginType.SOURCE, PluginType.SINK)


def framework_model(desc: PluginDesc) -> type[BaseModel] | None:
    """The keys the runtime validates for every plugin of this kind (connectors only:
    ``name``, ``tasks.max``, converters, ``transforms``, ``errors.*``...)."""
    return runtime_config_model(desc.cls) if desc.type in _CONNECTORS else None


def own_model(desc: PluginDesc) -> type[BaseModel] | None:
    """The plugin's own ``Config`` model, if it declares one."""
    model = getattr(desc.cls, "Config", None)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def plugin_key_defs(desc: PluginDesc) -> list[KeyDef]:
    """Every key of the plugin: a connector's definition includes the framework's keys
    first, as Kafka's does."""
    return [
        d for model in (framework_model(desc), own_model(desc)) if model is not None for d in key_defs(model)
    ]
