"""The chat gateway: Dudo in IRC channels, a thin gateway like the web one (``dudo irc``)."""
