"""What a worker holds from the start: every plugin is imported by discovery, so a library
a converter needs only to convert must not come with it (``connect.converters.lazy_modules``;
the idle worker's RSS in ``benchmarks/file_pipeline.py`` has a 120 MB target)."""

from __future__ import annotations

import subprocess
import sys

# Imported on first use only: confluent-kafka's registry client package (21 MB with its HTTP
# and Avro clients), fastavro (5 MB), jsonschema and referencing (2.6 MB).
HEAVY = ("confluent_kafka.schema_registry", "fastavro._write", "jsonschema.validators")

PROBE = """
import sys
from connect.runtime.plugins import Plugins, PluginType
plugins = Plugins()
found = {d.cls.__name__ for d in plugins.descriptors([PluginType.CONVERTER])}
assert {"AvroConverter", "JsonSchemaConverter", "ProtobufConverter"} <= found, found
heavy = sys.argv[1:]
print(",".join(m for m in heavy if m in sys.modules))
"""

USE = """
import sys
import connect.converters  # the converters' modules, with their lazy imports
from connect.converters.lazy_modules import lazy_module
import fastavro, jsonschema
parsed = fastavro.parse_schema({"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]})
jsonschema.validators.validator_for({})
print(parsed["name"], lazy_module("fastavro") is fastavro)
"""


def test_plugin_discovery_does_not_import_what_converters_need_only_to_convert() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *HEAVY], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "", f"imported at discovery: {out.stdout.strip()}"


def test_a_lazily_imported_module_is_the_module_once_used() -> None:
    out = subprocess.run([sys.executable, "-c", USE], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["R", "True"], out.stdout + out.stderr


THREADS = """
import threading
import connect.converters.avro as avro_module
import connect.converters.json_schema as json_schema_module
from connect.converters import AvroConverter, JsonSchemaConverter

errors = []
start = threading.Barrier(8)

def first_use(converter_class, use):
    start.wait()
    try:
        converter_class().configure({"schema.registry.url": "http://127.0.0.1:9"}, False)
        use()
    except Exception as exc:
        errors.append(repr(exc))

uses = [
    (AvroConverter, lambda: avro_module.fastavro.parse_schema({"type": "string"})),
    (JsonSchemaConverter, lambda: json_schema_module._validator({"type": "object"}, {})),
] * 4
threads = [threading.Thread(target=first_use, args=u) for u in uses]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(errors)
"""


def test_converters_configured_on_many_threads_at_once_find_their_libraries_loaded() -> None:
    # Python 3.11's LazyLoader shows other threads a module whose code is still running
    # (gh-114763): without the converters' load() in configure, most of these threads got
    # AttributeError.
    out = subprocess.run(
        [sys.executable, "-c", THREADS], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
