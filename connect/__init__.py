"""Sluiceway's Connect framework: plugin API, runtime, storage, herders, REST and CLI."""
