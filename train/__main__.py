"""python -m train: the same as blackjack-train."""

import sys

from .cli import main

sys.exit(main())
