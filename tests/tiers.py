"""Parameters shared by the tests for the test tiers (markers in pyproject.toml, ``pytest --fast``)."""

import pytest

STDIO_ERAS = ["auto", pytest.param("legacy", marks=pytest.mark.slow)]
"""The protocol eras of a test whose servers run over stdio: its 2025-11-25 case starts server
processes of its own for what the current-era case and that era over HTTP cover, so it is left
out of the fast tier (``slow``); the full suite runs both."""

HTTP_ERAS = ["auto", pytest.param("legacy", marks=pytest.mark.slow)]
"""The protocol eras of a test that stops, restarts or waits out an HTTP server: its 2025-11-25
case takes seconds of real time for what the current-era case checks of this package's side, so
it is left out of the fast tier (``slow``); the full suite runs both."""
