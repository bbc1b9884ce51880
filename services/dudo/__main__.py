import sys

from .cli import main

# Guarded: a process started with multiprocessing's "spawn" (the endgame solver's)
# imports this module as __mp_main__ and must not run the command line again.
if __name__ == "__main__":
    sys.exit(main())
