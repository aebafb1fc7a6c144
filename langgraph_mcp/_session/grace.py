"""How long the session layer waits for what should happen soon on its own: a server process to
exit, an HTTP connection to open, a dropped update stream to be worth opening again.

Read where they are used (``grace.EXIT``, never bound as a default argument or copied with
``from ... import``), so the package's tests can shorten them instead of waiting real seconds.
"""

from __future__ import annotations

__all__ = ["EXIT", "HTTP", "KILL", "LISTEN_PAUSE", "LISTEN_RETRY", "LISTEN_STABLE"]

EXIT = 2.0
"""Seconds a stdio server gets to exit once its stdin is closed, before SIGTERM."""

KILL = 2.0
"""Seconds a server gets to exit after SIGTERM, before SIGKILL to its process group."""

HTTP = 30.0
"""Seconds an HTTP request may take to connect, to send, or to wait for a pooled connection (reading
a response is not limited here: the call's own timeout governs it)."""

LISTEN_RETRY = 0.5
"""Seconds before a dropped ``subscriptions/listen`` stream is opened again (times the failures in
a row)."""

LISTEN_STABLE = 5.0
"""Seconds a ``subscriptions/listen`` stream must last for its end not to count as a failure."""

LISTEN_PAUSE = 30.0
"""Seconds before a ``subscriptions/listen`` stream that kept failing is tried again (sooner when
a subscription comes or goes)."""
