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
  key from an environment variable), cached on disk by a hash of the request. Never called in tests.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .conversation import Message
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


@dataclass
class OpenAICompatibleSummarizer(Summarizer):
    """A real model behind an OpenAI-compatible endpoint, with an on-disk cache keyed by the request hash."""

    model: str = "gpt-4o-mini"
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    cache_dir: str = os.path.join(Path.home(), ".cache", "compaction-lab", "summaries")
    timeout: float = 120.0
    name: str = "openai-compatible"
    simulated: bool = False

    def _key(self, payload: dict) -> str:
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def text(self, request: SummaryRequest) -> str:
        payload = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.text} for m in request.prompt()],
            "max_tokens": max(request.budget_tokens, 16) * 2,
        }
        path = Path(self.cache_dir) / f"{self._key({**payload, 'base_url': self.base_url})}.json"
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))["text"]
        key = os.environ.get(self.api_key_env)
        if not key:
            raise RuntimeError(f"summarizer 'openai-compatible' needs an API key in ${self.api_key_env}")
        req = urllib.request.Request(
            self.base_url.rstrip("/") + "/chat/completions",
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
        )
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - user-configured endpoint
            body = json.loads(resp.read().decode("utf-8"))
        text = str(body["choices"][0]["message"]["content"] or "")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"text": text, "request": payload}, ensure_ascii=False), encoding="utf-8")
        return text


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
        kwargs = {k: v for k, v in (("model", model), ("base_url", base_url or os.environ.get("OPENAI_BASE_URL")))
                  if v}
        return OpenAICompatibleSummarizer(**kwargs)
    raise ValueError(f"unknown summarizer {name!r}; expected one of {', '.join(SUMMARIZERS)}")
