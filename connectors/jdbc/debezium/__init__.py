"""What Debezium's connectors have in common, shared by the PostgreSQL (``cdc``) and MySQL/MariaDB
(``mysql``) change data capture connectors: the configuration keys every Debezium connector
declares, and the single-task connector that only validates its configuration.

It lives apart from both connectors because neither owns these conventions: each connector
package keeps what is its own database's, this one what Debezium's documentation describes
for all of them.
"""
