"""``dudo bench``: one module per target (engine, workers, gateway, path, tournament,
exploitability, scale), each run by the command line; figures go to docs/benchmarks.md.
Its face is those modules: each has its own ``run``."""

from . import engine, exploitability, gateway, path, scale, tournament, workers

__all__ = ["engine", "exploitability", "gateway", "path", "scale", "tournament", "workers"]
