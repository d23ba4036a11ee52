"""The lsp tests drive `blockkit lsp` over stdio; their helpers live in lsp_helpers.py."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
