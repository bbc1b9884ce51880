"""Kits that check other implementations against the published contracts: the rules
vectors (:mod:`.rules`), a client (:mod:`.client`, through :mod:`.proxy`) and a
third-party gateway (:mod:`.gateway`)."""

from .client import run
from .gateway import check
from .rules import FORMAT, Report, VectorError, run_paths, run_vector, vector_files

__all__ = [
    "FORMAT",
    "Report",
    "VectorError",
    "check",
    "run",
    "run_paths",
    "run_vector",
    "vector_files",
]
