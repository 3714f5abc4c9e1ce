"""python -m evaluate: the blackjack-evaluate command."""

import sys

from .cli import main

sys.exit(main())
