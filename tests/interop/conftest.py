"""Fixtures of the interoperability tests: the pinned servers, installed once, and their entries
shared by a module's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.interop.install import ensure_installed
from tests.interop.servers import Servers


@pytest.fixture(autouse=True, scope="module")
def _servers_installed() -> None:
    """Install the pinned servers (``npm ci``, ``uv sync --locked``) if missing or stale."""
    ensure_installed()


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    """The servers' entries; their HTTP servers are shared by the module's tests."""
    shared = Servers()
    yield shared
    shared.close()
