"""``python -m docshelf.app`` is the ``docshelf`` command."""

import sys

from docshelf.app.cli import main

sys.exit(main())
