"""Kafka Connect's REST API (FastAPI), served in the worker's event loop by uvicorn."""
