"""The publication pgoutput streams: checked, created or narrowed per ``publication.autocreate.mode``.

- ``all_tables``: an existing publication is used as it is; a missing one is created
  ``FOR ALL TABLES`` (which takes a superuser). The connector's filters then pick tables.
- ``filtered``: a missing publication is created ``FOR TABLE`` the tables the filters
  select now; an existing one gets that table list (``ALTER PUBLICATION ... SET TABLE``).
- ``disabled``: the publication must exist; the failure says how to create it.
"""

from __future__ import annotations

import logging
from typing import Any

from connectors.jdbc.cdc.catalog import Catalog, quote_ident
from connectors.jdbc.cdc.config import PublicationMode
from connectors.jdbc.cdc.faults import FatalDatabaseError
from connectors.jdbc.cdc.filters import Filters

__all__ = ["ensure_publication"]

log = logging.getLogger(__name__)


def ensure_publication(
    conn: Any, catalog: Catalog, name: str, mode: PublicationMode, dbname: str, filters: Filters
) -> None:
    """Make sure publication ``name`` exists as ``mode`` wants it (``conn`` is in autocommit)."""
    all_tables = catalog.publication(name)
    if all_tables is None and mode is PublicationMode.DISABLED:
        raise FatalDatabaseError(
            f'publication "{name}" does not exist in database {dbname!r} and '
            f"publication.autocreate.mode=disabled: create it (CREATE PUBLICATION {name} FOR ALL TABLES, "
            "or FOR TABLE the tables to capture), or set publication.name to an existing publication, or "
            "let the connector create it with publication.autocreate.mode=all_tables or filtered"
        )
    if mode is PublicationMode.DISABLED or (all_tables is not None and mode is PublicationMode.ALL_TABLES):
        return
    with conn.cursor() as cur:
        if mode is PublicationMode.ALL_TABLES:
            log.info('creating publication "%s" FOR ALL TABLES', name)
            cur.execute(f"CREATE PUBLICATION {quote_ident(name)} FOR ALL TABLES")
            return
        if all_tables:
            raise FatalDatabaseError(
                f'publication "{name}" is FOR ALL TABLES, which publication.autocreate.mode=filtered cannot '
                "narrow: drop it (DROP PUBLICATION) to let the connector create a filtered one, or use "
                "publication.autocreate.mode=all_tables"
            )
        tables = [t for _, t in catalog.user_tables() if filters.captures_table(t.schema, t.table)]
        listed = ", ".join(t.quoted() for t in tables)
        if all_tables is None:
            log.info('creating publication "%s" for %s', name, listed or "no tables")
            cur.execute(
                f"CREATE PUBLICATION {quote_ident(name)}" + (f" FOR TABLE {listed}" if tables else "")
            )
        elif tables:
            log.info('setting the tables of publication "%s" to %s', name, listed)
            cur.execute(f"ALTER PUBLICATION {quote_ident(name)} SET TABLE {listed}")
