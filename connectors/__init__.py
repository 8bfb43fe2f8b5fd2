"""Shipped connectors (file, jdbc, twitter, elasticsearch, s3). Each imports only ``connect.api``."""
