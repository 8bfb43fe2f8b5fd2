"""``GET /metrics``: the worker's Kafka Connect metrics in Prometheus' text format."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from connect.herder.base import Herder
from connect.runtime.metrics import RebalanceMetrics, worker_registry


def metrics_router(herder: Herder) -> APIRouter:
    def rebalance() -> RebalanceMetrics | None:
        # Only a distributed herder rebalances; standalone workers have no such metrics.
        metrics = getattr(herder, "rebalance_metrics", None)
        return metrics if isinstance(metrics, RebalanceMetrics) else None

    registry = worker_registry(herder.worker, rebalance)
    router = APIRouter()

    # A plain (not async) route: FastAPI runs it on its thread pool, so a scrape never
    # holds up the event loop that serves the rest of the API.
    @router.get(
        "/metrics",
        summary="Prometheus metrics (Kafka Connect's metric names)",
        response_class=Response,
        responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}},
    )
    def metrics() -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return router
