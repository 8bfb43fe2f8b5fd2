"""The Twitter source on tweepy's API v2 clients, importing only ``connect.api``.

- ``config``: the keys (and jcustenborder's that still apply); ``tweets``: the record
  schema and conversion; ``api``: search, rules and the stream through tweepy, pointed at
  ``twitter.api.base.url``; ``task``: polling, offsets, catch-up after a restart.
"""

from connectors.twitter.connector import TwitterSourceConnector
from connectors.twitter.task import TwitterSourceTask

__all__ = ["TwitterSourceConnector", "TwitterSourceTask"]
