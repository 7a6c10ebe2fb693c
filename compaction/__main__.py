"""``python -m compaction``."""

import sys

from .cli import main

sys.exit(main())
