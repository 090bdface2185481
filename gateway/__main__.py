"""``python -m gateway``: the ``pwc-mcp`` launcher (see :mod:`gateway.process.cli`)."""

import sys

from gateway.process.cli import main

sys.exit(main())
