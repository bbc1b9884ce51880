"""Dudo backend: a pure rules engine, and the services that host it over Redis Streams.

The code is in layers, one package each (docs/architecture.md opens with them): engine,
client, wire, bots, text, auth, entity, table, director, infra, worker, link, gateway,
chat, run, ops, conformance, bench, chaos, cli. Each package's ``__all__`` is its face.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
