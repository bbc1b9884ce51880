"""Examples of the client library: a bot (``python -m dudo_client.examples.bot``)."""

__all__: list[str] = []  # programs to read and run, not names to import
