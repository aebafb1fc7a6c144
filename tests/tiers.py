"""Parameters shared by the tests for the test tiers (markers in pyproject.toml, ``pytest --fast``)."""

import pytest

STDIO_ERAS = ["auto", pytest.param("legacy", marks=pytest.mark.slow)]
"""The protocol eras of a test whose servers run over stdio: its 2025-11-25 case starts server
processes of its own for what the current-era case and that era over HTTP cover, so it is left
out of the fast tier (``slow``); the full suite runs both."""
