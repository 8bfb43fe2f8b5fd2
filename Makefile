# Sluiceway developer commands. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := kcat chromium

.PHONY: help install system-deps demo test test-fast lint docs typecheck bench-broker bench-file bench-transforms bench-multicore bench-failover bench-jdbc bench-spark bench-spark-avro bench-elasticsearch bench-s3 bench-avro bench-transactions bench-jdbc-sink bench-mysql-cdc bench-mirror broker clean

help:
	@echo "make demo          file and bank pipelines on the embedded broker, checked end to end (Ctrl-C stops it)"
	@echo "make test          install everything (venv, Python deps, Debian packages), then lint, types and the tests"
	@echo "make test-fast     the tests without the slow system tests"
	@echo "make broker        run the broker with config/broker.properties"
	@echo "make bench-broker  broker throughput benchmark (prints ratios)"
	@echo "make bench-file    file connector pipeline benchmark (prints ratios)"
	@echo "make bench-transforms  file source with and without a five-SMT chain (prints the ratio)"
	@echo "make bench-multicore  four CPU-bound tasks: one worker process against --processes 2 (prints the ratio)"
	@echo "make bench-failover  kill -9 and scale-out of a distributed worker fleet (prints times and ratios)"
	@echo "make bench-jdbc    JDBC query source and PostgreSQL CDC against raw loops (prints ratios, latency)"
	@echo "make bench-jdbc-sink  JDBC sink upserts against raw SQLAlchemy executemany (PostgreSQL, SQLite; prints ratios)"
	@echo "make bench-mysql-cdc  MySQL CDC from a MariaDB binlog against a raw python-mysql-replication loop (prints the ratio)"
	@echo "make bench-mirror  MirrorMaker 2 replication A -> B against a raw consume -> produce loop (prints the ratio)"
	@echo "make bench-spark   Spark sink against raw PySpark, Spark reader against a raw consumer (prints ratios)"
	@echo "make bench-elasticsearch  Elasticsearch sink against the client's helpers.bulk (prints the ratio)"
	@echo "make bench-s3      S3 sink against raw boto3 put_object of the same objects (prints the ratio)"
	@echo "make bench-avro    AvroConverter pipelines against Confluent's Avro serializers; registry lookups/s"
	@echo "make bench-transactions  transactional vs idempotent produce, read_committed vs read_uncommitted, the file source exactly once vs at least once (prints ratios)"
	@echo "make docs          regenerate docs/reference (every shipped plugin's config keys) from the config models"
	@echo "make lint / make typecheck"

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@echo "Installing Sluiceway and its Python dependencies into $(VENV) (PySpark is the largest: the first time takes a few minutes)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --upgrade pip
	@$(BIN)/pip install --quiet -e '.[test]'
	@# python-schema-registry-client, a registry client we did not write, judges the Schema
	@# Registry; its top-level package is also named `schema_registry`, so it lives apart from
	@# ours (tests run it in its own process with this directory on PYTHONPATH).
	@$(BIN)/pip install --quiet --target $(VENV)/judges 'python-schema-registry-client>=2.6,<3'
	@touch $@

# Debian packages the tests drive: kcat (a Kafka client this project did not write), chromium
# (the web console's browser tests, through Playwright),
# PostgreSQL and MariaDB server binaries for the JDBC tests' throwaway servers, and a Java
# 17+ runtime for Spark 4 (each skipped when already there, from whatever package).
system-deps: install
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || missing="$$missing postgresql"; \
	command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || missing="$$missing mariadb-server"; \
	java_major=$$( { "$${JAVA_HOME:+$$JAVA_HOME/bin/}java" -version 2>&1 || true; } | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	if [ -z "$$java_major" ] || [ "$$java_major" -lt 17 ]; then missing="$$missing openjdk-17-jre-headless"; fi; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing (a few minutes; the log is in $(VENV)/apt.log)"; \
	  { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; } \
	    >$(VENV)/apt.log 2>&1 || { tail -30 $(VENV)/apt.log; exit 1; }; \
	fi

# DEMO_ARGS: more arguments for `sluiceway demo` (--data-dir, --rest-port, --broker-port, ...).
demo: install
	$(BIN)/sluiceway demo $(DEMO_ARGS)

# Lint and types first: they take seconds, the suite about half an hour on 2 cores.
test: install system-deps lint typecheck
	$(BIN)/python -m pytest

test-fast: install
	$(BIN)/python -m pytest -m "not slow"

LINTED := broker schema_registry connect connectors transforms spark_sink sluiceway tests benchmarks

lint: install
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check --quiet $(LINTED)

typecheck: install
	$(BIN)/mypy

docs: install
	$(BIN)/python -m sluiceway.reference docs/reference

broker: install
	$(BIN)/sluiceway broker config/broker.properties

bench-broker: install
	$(BIN)/python benchmarks/broker_throughput.py

bench-file: install
	$(BIN)/python benchmarks/file_pipeline.py

bench-transforms: install
	$(BIN)/python benchmarks/transforms.py

bench-multicore: install
	$(BIN)/python benchmarks/multicore.py

bench-failover: install
	$(BIN)/python benchmarks/failover.py

bench-jdbc: install system-deps
	$(BIN)/python benchmarks/jdbc_source.py

bench-jdbc-sink: install system-deps
	$(BIN)/python benchmarks/jdbc_sink.py

bench-mysql-cdc: install system-deps
	$(BIN)/python benchmarks/mysql_cdc.py

bench-mirror: install
	$(BIN)/python benchmarks/mirror.py

bench-spark: install system-deps
	$(BIN)/python benchmarks/spark_sink.py

bench-spark-avro: install system-deps
	$(BIN)/python benchmarks/spark_reader_avro.py

bench-elasticsearch: install
	$(BIN)/python benchmarks/elasticsearch_sink.py

bench-s3: install
	$(BIN)/python benchmarks/s3_sink.py

bench-avro: install
	$(BIN)/python benchmarks/avro_converter.py

bench-transactions: install
	$(BIN)/python benchmarks/transactions.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache *.egg-info spark-warehouse
