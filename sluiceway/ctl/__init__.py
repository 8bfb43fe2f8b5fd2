"""``sluiceway ctl``: operate a running Connect cluster over Kafka Connect's REST API.

Modelled on kcctl. The package talks to workers only through the public REST API
(``client``), so it works against Apache Kafka Connect as well as Sluiceway workers.

Layout: pure logic with no I/O (``config_files``, ``config_patch``, ``offsets_file``,
``rows``, ``states``, ``exit_codes``, ``rest_models``), one HTTP client (``client``),
the output (``render``, ``progress``), waiting for states (``waiting``), the command
handlers (``inspect_commands``, ``change_commands``, ``offset_commands``) and the
argparse wiring (``cli``).

Non-goals: managing worker configs, talking to the broker (see ``sluiceway topics``),
or keeping contexts of several clusters in a config file (pass ``--url`` or set
``SLUICEWAY_CONNECT_URL``).
"""
