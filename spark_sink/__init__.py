"""The Spark sink connector (PySpark). Imports only ``connect.api``."""
