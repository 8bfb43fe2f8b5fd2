"""ALTER TABLE and RENAME TABLE (in progress)."""

from __future__ import annotations

from sqlglot import Token

from connectors.jdbc.mysql.schema import DdlError, SchemaCatalog, TableChange


def alter_table(
    catalog: SchemaCatalog, sql: str, tokens: list[Token], database: str | None
) -> list[TableChange]:
    raise DdlError(f"ALTER TABLE is not supported yet: {sql.strip()!r}")


def rename_tables(
    catalog: SchemaCatalog, sql: str, tokens: list[Token], database: str | None
) -> list[TableChange]:
    raise DdlError(f"RENAME TABLE is not supported yet: {sql.strip()!r}")
