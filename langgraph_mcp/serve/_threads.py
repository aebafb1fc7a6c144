"""Threads of a served graph: whose they are, which one a call runs on, and task ids.

Every thread id starts with the caller's owner tag: a short hash of the verified principal of
the request's access token (client id, issuer, subject), or ``anon`` without auth. A thread is
found only through an id that carries the caller's own tag, so a user never reaches another
user's runs, questions or tasks.

* one thread per call by default (``<owner>.<random>``);
* a conversation kept across calls: the call names it with the thread key, an argument
  (:data:`THREAD_ARGUMENT` by default, added to each tool's schema) or the request's
  ``_meta[THREAD_META_KEY]``; calls with the same name (and the same owner) continue the same
  thread (``<owner>.c.<name>``);
* a task id is ``<thread id>~<run id>``: a server restarted on a durable checkpointer finds the
  task's thread again from its id.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any

__all__ = [
    "ANONYMOUS",
    "THREAD_ARGUMENT",
    "THREAD_META_KEY",
    "owner_of",
    "owns",
    "conversation_thread",
    "new_thread",
    "split_task_id",
    "task_id",
]

THREAD_ARGUMENT = "thread"
"""The default name of the optional argument that keeps a conversation across calls."""
THREAD_META_KEY = "io.langgraph/thread"
"""The request ``_meta`` key that names a conversation (same meaning as the argument)."""
ANONYMOUS = "anon"
_SAFE = re.compile(r"[^A-Za-z0-9_-]+")


def owner_of(request: Any) -> str:
    """The owner tag of the request's caller (``anon`` without a verified access token)."""
    user = None
    if request is not None:
        scope = getattr(request, "scope", None)
        user = scope.get("user") if isinstance(scope, dict) else None
    token = getattr(user, "access_token", None)
    if token is None:
        return ANONYMOUS
    issuer = (getattr(token, "claims", None) or {}).get("iss")
    principal = "\x00".join(str(part) for part in (token.client_id, issuer, token.subject))
    return "u" + hashlib.sha256(principal.encode()).hexdigest()[:20]


def new_thread(owner: str) -> str:
    """A thread of its own for one call."""
    return f"{owner}.{uuid.uuid4().hex}"


def conversation_thread(owner: str, name: str) -> str:
    """The thread of the conversation ``name`` of this owner."""
    safe = _SAFE.sub("_", name)[:80]
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{owner}.c.{safe}.{digest}"


def owns(owner: str, thread_id: str) -> bool:
    """Whether ``thread_id`` belongs to ``owner``."""
    return thread_id.startswith(owner + ".")


def task_id(thread_id: str, run_id: str) -> str:
    return f"{thread_id}~{run_id}"


def split_task_id(value: str) -> tuple[str, str] | None:
    """``(thread id, run id)`` of a task id, or ``None`` when it is not one of ours."""
    if len(value) > _MAX_TASK_ID:
        return None
    thread, sep, run = value.rpartition("~")
    return (thread, run) if sep and thread and run else None


_MAX_TASK_ID = 512
"""No task id this server makes is longer (an owner tag, a thread name of at most 80 characters
and two hex ids)."""
