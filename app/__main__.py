"""``python -m app`` is the ``docshelf`` command."""

import sys

from app.cli import main

sys.exit(main())
