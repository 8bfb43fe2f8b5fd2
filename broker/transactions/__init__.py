"""Kafka transactions, coordinator side: the state machine, ``__transaction_state``, the
coordinator that writes markers."""

from broker.transactions.coordinator import TransactionCoordinator
from broker.transactions.txn_log import TRANSACTION_STATE_TOPIC

__all__ = ["TRANSACTION_STATE_TOPIC", "TransactionCoordinator"]
