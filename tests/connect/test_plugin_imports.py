"""What a worker holds from the start: every plugin is imported by discovery, so a library
a converter needs only to convert must not come with it, and comes with its ``configure``
(``connect.converters.lazy_modules``; the idle worker's RSS in ``benchmarks/file_pipeline.py``
has a 120 MB target)."""

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
import connect.converters.avro as avro_module
import connect.converters.json_schema as json_schema_module
from connect.converters import AvroConverter, JsonSchemaConverter

assert "fastavro" not in vars(avro_module) and "jsonschema" not in vars(json_schema_module)
for converter in (AvroConverter(), JsonSchemaConverter()):
    converter.configure({"schema.registry.url": "http://127.0.0.1:9"}, False)
print(
    avro_module.fastavro is sys.modules["fastavro"],
    json_schema_module.jsonschema is sys.modules["jsonschema"],
    json_schema_module.referencing.jsonschema is sys.modules["referencing.jsonschema"],
)
"""


def test_plugin_discovery_does_not_import_what_converters_need_only_to_convert() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *HEAVY], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "", f"imported at discovery: {out.stdout.strip()}"


def test_configuring_a_converter_binds_the_libraries_it_converts_with() -> None:
    out = subprocess.run([sys.executable, "-c", USE], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["True", "True", "True"], out.stdout + out.stderr


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
    # With the standard library's LazyLoader instead of imports in configure, Python 3.11
    # showed other threads a module whose code was still running (gh-114763): 6 of these 8
    # threads got AttributeError.
    out = subprocess.run(
        [sys.executable, "-c", THREADS], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
