"""``python -m aftershock.cli``: the ``aftershock`` command."""

import sys

from aftershock.cli import main

sys.exit(main())
