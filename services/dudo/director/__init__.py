"""The tournament director: tournaments over many tables, their balancing, chips and standings.

:mod:`~dudo.director.balance` holds the balancing rules as pure functions.
"""
