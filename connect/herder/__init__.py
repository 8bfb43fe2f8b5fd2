"""Herders: the control plane of a worker (standalone: configs in memory; distributed: a group)."""
