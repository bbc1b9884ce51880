"""``dudo bench``: one module per target (engine, workers, gateway, path, tournament,
exploitability), each run by the command line; figures go to docs/benchmarks.md."""

__all__: list[str] = []  # its modules are its faces: the command line runs them
