"""The programs ``dudo`` starts, composed from the layers below: the one place that
picks which entity a partition loop hosts (docs/architecture.md, "Layers")."""

from .worker import table_worker

__all__ = ["table_worker"]
