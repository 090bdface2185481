"""``python -m catalog`` runs the ``pwc-catalog`` CLI."""

from __future__ import annotations

import sys

from catalog.cli import main

sys.exit(main())
