"""Summarizer backends for strategies that call an LLM to summarize the part of the history they replace.

Every strategy builds the request its framework would send (instruction prompt + transcript or raw messages) and
wraps the returned text exactly as its framework does; the backend only produces the text:

- ``extractive`` (default): offline and deterministic. Builds a summary from the replaced messages — user requests,
  tool names and arguments, first lines of results, identifiers (paths, names, numbers) — sized to a token budget.
  A simulation: the UI labels it as such.
- ``fixed-size``: a placeholder of exactly the requested size, for studying token dynamics alone.
- ``from-log``: the real agent's own summaries from the log (Claude Code ``isCompactSummary``), in order; when the log
  has none left, falls back to ``extractive`` and says so.
- ``openai-compatible``: a real model behind any OpenAI-compatible ``/chat/completions`` endpoint (base URL, model,
  key from an environment variable). Its summaries are cached in memory (bounded) by a hash of the request, and on
  disk only when ``COMPACTION_LAB_SUMMARY_CACHE`` asks for it (see :func:`summary_cache_dir`). Never called in tests
  except against a local listener.

Live calls are the operator's choice. A process that calls :func:`gate_live_calls` (the app does, at start) makes
no model request unless it runs inside ``live_calls(True)`` *and* was started with ``COMPACTION_LAB_LIVE_SUMMARIZER=1``;
anywhere else in it (a setup from a shared link not yet confirmed, a sweep, a fleet) the ``openai-compatible``
backend writes an extractive summary instead, labelled as simulated, and records the request it did not send
(:class:`WithheldRequest`), from which the app estimates what confirming would cost. The CLI and the Python API
are not gated: choosing the backend there is the operator's explicit choice.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import urllib.parse
from abc import ABC
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from .conversation import Message
from .errors import ConfigError
from .identifiers import identifiers
from .tokens import Counter

SUMMARIZERS = ("extractive", "fixed-size", "from-log", "openai-compatible")
#: characters per token assumed when sizing extractive / fixed-size text to a token budget
_CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class SummaryRequest:
    """What a framework would send to its summarizer model."""

    instruction: str  # the system/instruction prompt
    transcript: str  # the user-side content: a rendered transcript, or the raw messages rendered for display
    messages: tuple[Message, ...]  # the messages being summarized (what the extractive backend mines)
    budget_tokens: int  # the size to aim for
    #: the exact messages sent, for a framework that does not send instruction (system) + transcript (user), e.g.
    #: LangChain's one human message: its prompt with the transcript filled in
    sent: tuple[Message, ...] = ()

    def prompt(self) -> tuple[Message, ...]:
        """The messages the framework sends to its summarizer model."""
        return self.sent or (Message("system", (self.instruction,)), Message("user", (self.transcript,)))


@dataclass
class SummaryCall:
    """One summarizer call: its text and what it cost."""

    text: str
    input_tokens: int
    output_tokens: int
    backend: str
    simulated: bool = True
    notice: str = ""

    def usage(self) -> dict[str, int]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


class Summarizer(ABC):
    """A summarizer backend."""

    name: str = ""
    simulated: bool = True

    @abstractmethod
    def text(self, request: SummaryRequest) -> str:
        """The summary text (unwrapped: the strategy adds its framework's wrapper)."""

    def summarize(self, request: SummaryRequest, counter: Counter) -> SummaryCall:
        """Summarize and measure the call with ``counter`` (input = the request's :meth:`~SummaryRequest.prompt`)."""
        text = self.text(request)
        return SummaryCall(text, counter.count(request.prompt()), counter.count((Message("assistant", (text,)),)),
                           self.name, self.simulated)


# ------------------------------------------------------------------------------------------------- extractive
def _first_line(text: str, limit: int = 160) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(chars - 1, 0)].rstrip() + "…"


class ExtractiveSummarizer(Summarizer):
    """Deterministic offline summary mined from the replaced messages."""

    name = "extractive"

    def text(self, request: SummaryRequest) -> str:
        budget = max(request.budget_tokens, 16) * _CHARS_PER_TOKEN
        requests: list[str] = []
        actions: list[str] = []
        found: dict[str, None] = {}
        for m in request.messages:
            if m.role == "user" and m.text.strip():
                requests.append(_first_line(m.text, 240))
            for call in m.tool_calls:
                args = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
                actions.append(f"{call.name}({_cut(args, 120)})")
            if m.tool_result is not None:
                status = "error" if m.tool_result.error else "result"
                actions.append(f"  → {status}: {_first_line(m.tool_result.text)}")
            if m.role == "assistant" and m.text.strip():
                actions.append(f"  note: {_first_line(m.text)}")
            for match in identifiers(m.tool_result.text if m.tool_result is not None else m.text):
                found.setdefault(match, None)
        sections = [
            ("User requests", requests),
            ("Actions and results", actions),
            ("Identifiers", [", ".join(list(found)[:60])] if found else []),
        ]
        lines: list[str] = ["[Simulated extractive summary]"]
        used = len(lines[0])
        for title, items in sections:
            if not items:
                continue
            header = f"## {title}"
            if used + len(header) + 1 > budget:
                break
            lines.append(header)
            used += len(header) + 1
            for item in items:
                if used + len(item) + 3 > budget:
                    lines.append("- …")
                    used += 4
                    break
                lines.append(f"- {item}" if not item.startswith("  ") else item)
                used += len(item) + 3
        return "\n".join(lines)


class FixedSizeSummarizer(Summarizer):
    """A placeholder of ``budget_tokens`` tokens (about 4 characters each)."""

    name = "fixed-size"

    def text(self, request: SummaryRequest) -> str:
        chars = max(request.budget_tokens, 1) * _CHARS_PER_TOKEN
        head = f"[Simulated summary of {len(request.messages)} messages, {request.budget_tokens} tokens]"
        filler = " summary" * max(0, (chars - len(head)) // 8)
        return head + filler


@dataclass
class FromLogSummarizer(Summarizer):
    """The log's own summaries, in order; extractive when none is left."""

    summaries: Sequence[str] = ()
    name: str = "from-log"
    _next: int = field(default=0, repr=False)
    simulated: bool = False

    def text(self, request: SummaryRequest) -> str:
        if self._next < len(self.summaries):
            self._next += 1
            return self.summaries[self._next - 1]
        return ExtractiveSummarizer().text(request)

    def summarize(self, request: SummaryRequest, counter: Counter) -> SummaryCall:
        exhausted = self._next >= len(self.summaries)
        call = super().summarize(request, counter)
        if exhausted:
            call.simulated, call.backend = True, "extractive"
            call.notice = "the log has no further summary of its own; used the extractive summarizer"
        return call


#: ``=1``: the app may call the ``openai-compatible`` summarizer (for setups from a link or an import, only once the
#: person on the page confirms)
LIVE_ENV = "COMPACTION_LAB_LIVE_SUMMARIZER"
#: ``=1``: also cache live summaries on disk under ``~/.cache/compaction-lab/summaries`` (``$XDG_CACHE_HOME`` when
#: set); any other value but ``0``: the folder to cache them in
CACHE_ENV = "COMPACTION_LAB_SUMMARY_CACHE"
#: set by :func:`gate_live_calls` in the process environment, so processes it starts (sweep and fleet workers) are
#: gated too
GATE_ENV = "COMPACTION_LAB_GATE_LIVE_SUMMARIZER"
#: the in-memory cache of live summaries: at most this many, and this many characters in all
MEMORY_CACHE_ENTRIES = 256
MEMORY_CACHE_CHARS = 8 << 20
#: the most bytes read from one response of the summarizer endpoint
MAX_RESPONSE_BYTES = 8 << 20


def live_enabled() -> bool:
    """Whether the operator enabled live summaries for the app (``COMPACTION_LAB_LIVE_SUMMARIZER=1``)."""
    return os.environ.get(LIVE_ENV, "").strip() == "1"


def gate_live_calls() -> None:
    """From now on, this process and those it starts call a live summarizer only inside ``live_calls(True)``, and
    only when :func:`live_enabled`."""
    os.environ[GATE_ENV] = "1"


def live_calls_gated() -> bool:
    """Whether :func:`gate_live_calls` applies to this process."""
    return os.environ.get(GATE_ENV) == "1"


@dataclass(frozen=True)
class WithheldRequest:
    """A request the ``openai-compatible`` backend did not send (the call was gated): what it would have cost."""

    model: str
    host: str
    input_tokens: int
    max_output_tokens: int


@dataclass(frozen=True)
class LiveEstimate:
    """What sending a replay's withheld requests would take: calls, input tokens (as the replay's counter measures
    the prompts) and the output tokens they may return (``max_tokens``), to which models and hosts."""

    calls: int
    input_tokens: int
    max_output_tokens: int
    models: tuple[str, ...]
    hosts: tuple[str, ...]

    @classmethod
    def of(cls, withheld: Sequence[WithheldRequest]) -> LiveEstimate:
        return cls(len(withheld), sum(w.input_tokens for w in withheld), sum(w.max_output_tokens for w in withheld),
                   tuple(dict.fromkeys(w.model for w in withheld)), tuple(dict.fromkeys(w.host for w in withheld)))


#: (live calls allowed here, the list withheld requests are recorded in) for the code running in this context
_LIVE: ContextVar[tuple[bool, list[WithheldRequest] | None]] = ContextVar("compaction_live_calls",
                                                                          default=(False, None))


@contextmanager
def live_calls(allowed: bool) -> Iterator[list[WithheldRequest]]:
    """Run code under a decision on live calls (it matters in a gated process only): yields the list in which the
    requests that were not sent are recorded."""
    withheld: list[WithheldRequest] = []
    token = _LIVE.set((allowed, withheld))
    try:
        yield withheld
    finally:
        _LIVE.reset(token)


def _live_call_allowed() -> bool:
    return not live_calls_gated() or (_LIVE.get()[0] and live_enabled())


def summary_cache_dir() -> Path | None:
    """The folder live summaries are cached in on disk, or None (the default: memory only)."""
    value = os.environ.get(CACHE_ENV, "").strip()
    if not value or value == "0":
        return None
    if value == "1":
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
        return Path(base) / "compaction-lab" / "summaries"
    return Path(value).expanduser()


class _MemoryCache:
    """Live summaries by request hash, least recently used dropped first, bounded in entries and characters."""

    def __init__(self, entries: int, chars: int) -> None:
        self.entries, self.chars = entries, chars
        self._items: OrderedDict[str, str] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            text = self._items.get(key)
            if text is not None:
                self._items.move_to_end(key)
            return text

    def put(self, key: str, text: str) -> None:
        if len(text) > self.chars:
            return
        with self._lock:
            old = self._items.pop(key, None)
            self._size -= len(old) if old is not None else 0
            self._items[key] = text
            self._size += len(text)
            while len(self._items) > self.entries or self._size > self.chars:
                _, dropped = self._items.popitem(last=False)
                self._size -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._size = 0

    def __len__(self) -> int:
        return len(self._items)


SUMMARY_CACHE = _MemoryCache(MEMORY_CACHE_ENTRIES, MEMORY_CACHE_CHARS)


@dataclass
class OpenAICompatibleSummarizer(Summarizer):
    """A real model behind an OpenAI-compatible endpoint; summaries cached by the request hash, in memory (and on
    disk in ``cache_dir``, by default :func:`summary_cache_dir`)."""

    model: str = "gpt-4o-mini"
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    cache_dir: str | None = None
    timeout: float = 120.0
    name: str = "openai-compatible"
    simulated: bool = False

    def _key(self, payload: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def payload(self, request: SummaryRequest) -> dict[str, Any]:
        """The ``/chat/completions`` request body for ``request``."""
        return {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.text} for m in request.prompt()],
            "max_tokens": max(request.budget_tokens, 16) * 2,
        }

    def summarize(self, request: SummaryRequest, counter: Counter) -> SummaryCall:
        if _live_call_allowed():
            return super().summarize(request, counter)
        call = ExtractiveSummarizer().summarize(request, counter)
        withheld = WithheldRequest(self.model, urllib.parse.urlsplit(self.base_url).hostname or self.base_url,
                                   call.input_tokens, self.payload(request)["max_tokens"])
        recorded = _LIVE.get()[1]
        if recorded is not None:
            recorded.append(withheld)
        call.notice = (f"the openai-compatible summarizer ({self.model} at {withheld.host}) was not called here; "
                       "an extractive summary stands in and nothing was sent")
        return call

    def text(self, request: SummaryRequest) -> str:
        payload = self.payload(request)
        key = self._key({**payload, "base_url": self.base_url})
        cached = SUMMARY_CACHE.get(key)
        if cached is not None:
            return cached
        folder = Path(self.cache_dir) if self.cache_dir else summary_cache_dir()
        path = folder / f"{key}.json" if folder is not None else None
        if path is not None and path.is_file():
            try:
                text = str(json.loads(path.read_text(encoding="utf-8"))["text"])
                SUMMARY_CACHE.put(key, text)
                return text
            except (OSError, ValueError, KeyError, TypeError):
                pass  # a damaged cache file: ask the model again
        text = self._request(payload)
        SUMMARY_CACHE.put(key, text)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            path.write_text(json.dumps({"text": text, "request": payload}, ensure_ascii=False), encoding="utf-8")
        return text

    def _request(self, payload: dict[str, Any]) -> str:
        key = os.environ.get(self.api_key_env)
        if not key:
            raise RuntimeError(f"summarizer 'openai-compatible' needs an API key in ${self.api_key_env}")
        import urllib.request  # only a live request needs it (20 ms of every CLI run and fleet worker otherwise)

        req = urllib.request.Request(
            self.base_url.rstrip("/") + "/chat/completions",
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
        )
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - operator-configured endpoint
            raw = resp.read(MAX_RESPONSE_BYTES + 1)
        if len(raw) > MAX_RESPONSE_BYTES:
            raise RuntimeError(f"summarizer 'openai-compatible': the response is larger than {MAX_RESPONSE_BYTES:,} "
                               "bytes")
        try:
            return str(json.loads(raw.decode("utf-8"))["choices"][0]["message"]["content"] or "")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise RuntimeError("summarizer 'openai-compatible': the response is not a chat completion "
                               f"({type(exc).__name__}: {exc})") from None


def make_summarizer(name: str = "extractive", *, log_summaries: Sequence[str] = (), model: str | None = None,
                    base_url: str | None = None) -> Summarizer:
    """Build a backend by name (one of :data:`SUMMARIZERS`)."""
    if name == "extractive":
        return ExtractiveSummarizer()
    if name == "fixed-size":
        return FixedSizeSummarizer()
    if name == "from-log":
        return FromLogSummarizer(tuple(log_summaries))
    if name == "openai-compatible":
        kwargs: dict[str, Any] = {k: v for k, v in (("model", model), ("base_url", base_url or os.environ.get("OPENAI_BASE_URL")))
                  if v}
        return OpenAICompatibleSummarizer(**kwargs)
    raise ConfigError(f"unknown summarizer {name!r}; expected one of {', '.join(SUMMARIZERS)}")
