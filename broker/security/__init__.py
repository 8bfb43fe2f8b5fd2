"""Security of the broker's listeners: TLS, SASL (PLAIN, SCRAM-SHA-256/512) and the
SCRAM credential store.

- ``listeners``: Kafka's listener names, security protocols and per-listener keys.
- ``tls``: the ``ssl.SSLContext`` of SSL/SASL_SSL listeners and certificate principals.
- ``jaas``: the broker side of ``sasl.jaas.config`` (PLAIN's ``user_<name>`` entries).
- ``scram``: pure SCRAM credential maths and the server side of one exchange.
- ``scram_store``: the salted, hashed SCRAM credentials kept in the data directory.
- ``sasl``: one connection's SASL state machine (handshake, authenticate).
- ``connection``: what a connection must do before its requests reach the handlers.

Non-goals: GSSAPI (Kerberos), OAUTHBEARER, delegation tokens and re-authentication
(KIP-368; sessions last as long as the connection, ``session_lifetime_ms`` is 0).
"""
