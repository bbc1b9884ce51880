"""Dudo backend: a pure rules engine, and the services that host it over Redis Streams."""

__version__ = "0.1.0"
