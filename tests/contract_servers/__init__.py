"""Contract servers: local stand-ins for external systems that cannot run on the test machine.

Each one reproduces the documented wire behaviour of the real system closely enough for its
official client to work against it unchanged, and adds fault injection and observation
hooks (kept apart from the real API) for connector tests and benchmarks.
"""
