"""``python -m gateway``: the ``pwc-mcp`` launcher (see :mod:`gateway.cli`)."""

import sys

from gateway.cli import main

sys.exit(main())
