"""``python -m schema_registry``: the same as ``sluiceway schema-registry``."""

import sys

from schema_registry.server import main

sys.exit(main(prog="python -m schema_registry"))
