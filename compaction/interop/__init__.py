"""Bridges between our conversation model and the real framework libraries.

Each bridge imports its library lazily, only when one of its functions is called, so ``compaction`` works without
any of them installed. They exist to prove the replay engine exact: tests and benchmarks drive the libraries' own
hooks and counters over the same logs and compare.

- :mod:`compaction.interop.haystack` — haystack-ai ``ChatMessage``/``Tool`` conversion and a driver that runs the
  real ``CompactionHook`` call by call, as the Haystack ``Agent`` does.
- :mod:`compaction.interop.langchain` — our messages as the LangChain messages an agent holds, and a driver that
  runs real LangChain v1 agent middleware call by call, as ``create_agent`` does.
"""

from __future__ import annotations

from typing import Any

_HAYSTACK_NAMES = (
    "HookCall",
    "chat_message_view",
    "differences",
    "drive_haystack_hook",
    "from_haystack_message",
    "from_haystack_messages",
    "message_view",
    "to_haystack_message",
    "to_haystack_messages",
    "to_haystack_tools",
    "with_tokens_sent",
)
_LANGCHAIN_NAMES = (
    "MiddlewareCall",
    "drive_langchain_middleware",
    "langchain_view",
    "to_langchain_message",
    "to_langchain_messages",
)


def __getattr__(name: str) -> Any:
    """Resolve the bridge functions on first use (importing the bridge module, never the library itself)."""
    if name in _HAYSTACK_NAMES:
        from . import haystack

        return getattr(haystack, name)
    if name in _LANGCHAIN_NAMES:
        from . import langchain

        return getattr(langchain, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [*_HAYSTACK_NAMES, *_LANGCHAIN_NAMES]
