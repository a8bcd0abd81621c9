"""``python -m skriskrank demo``: see :mod:`skriskrank._cli`."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
