"""A table as text and typed commands as actions, for the terminal and chat players."""
