"""Microsoft Agent Framework (Python, ``agent-framework-core`` 1.23.0) compaction, re-created from the behaviour
spec (strategies.md §2) and checked against the installed package.

The framework never deletes a message. It annotates every message with its group (id ``group_<message id>``, kind
``system`` / ``user`` / ``assistant_text`` / ``tool_call``; a tool result is linked to its unique earlier call even
when they are not adjacent), a cached token count, and a sticky ``_excluded`` flag with a reason. Strategies flip
flags and insert summary messages into the same list; the model gets the included projection. In an agent run
``_prepare_messages_for_model_call`` applies the strategy before every model call to the caller's list, so
exclusions and inserted summaries persist across calls — which is how :class:`PythonRunner` replays it.

Most Python strategies have no trigger: they act on every call (sliding window, selective tool call, tool-result
compaction). Truncation, summarization, token-budget and context-window strategies have their own conditions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..conversation import Message
from ..formats.agent_framework import contents_of, token_json
from ..history import Entry, inserted
from ..tokens import Counter, make_counter
from ._nesting import NestedStrategy, describe, inserted_entry, make_nested, native_name
from .agent_framework import parse_pipeline
from .base import SUMMARIZER_PARAMS, CallOutcome, Param, RunContext, Runner, StrategyInfo, register

DOCS = "https://learn.microsoft.com/python/api/agent-framework-core/agent_framework"
TOOL_CALL_TYPES = frozenset({"function_call", "computer_tool_call", "mcp_server_tool_call", "code_interpreter_tool_call",
                             "shell_tool_call", "image_generation_tool_call"})
LINKED_RESULT_TYPES = {"function_result": "function_call", "computer_tool_result": "computer_tool_call"}


# ------------------------------------------------------------------------------------------------- the history
@dataclass(eq=False)
class Record:
    """One message of the framework's list with its ``additional_properties`` annotations."""

    entry: Entry
    message_id: str | None = None
    group_id: str | None = None
    kind: str | None = None
    group_index: int | None = None
    has_reasoning: bool = False
    excluded: bool = False
    reason: str | None = None
    tokens: int | None = field(default=None, repr=False)
    #: content types as ``Message.contents`` holds them (what grouping looks at)
    types: tuple[str, ...] = field(default=(), repr=False)
    #: linkable call declarations and results: (role, call content type, call id)
    calls: tuple[tuple[str, str, str], ...] = field(default=(), repr=False)

    #: the stored entry while excluded, built once per exclusion reason and reused by every snapshot
    _excluded_entry: Entry | None = field(default=None, repr=False)

    @property
    def message(self) -> Message:
        return self.entry.message

    def stored(self) -> Entry:
        """The entry as a snapshot stores it (with the exclusion flag and reason when excluded)."""
        if not self.excluded:
            return self.entry
        reason = self.reason or "excluded"
        cached = self._excluded_entry
        if cached is None or cached.exclude_reason != reason:
            cached = self._excluded_entry = self.entry.excluded_as(reason)
        return cached


def _record(entry: Entry) -> Record:
    own = entry.message.meta.get("message_id")
    contents = contents_of(entry.message)
    return Record(entry, str(own) if own else None, types=tuple(c["type"] for c in contents),
                  calls=_call_ids(entry.message.role, contents))


def _is_tool_call_assistant(r: Record) -> bool:
    return r.message.role == "assistant" and any(t in TOOL_CALL_TYPES for t in r.types)


def _is_reasoning_only(r: Record) -> bool:
    """Python: a non-empty content list of reasoning only (an empty assistant is ``assistant_text``)."""
    return r.message.role == "assistant" and bool(r.types) and all(t == "text_reasoning" for t in r.types)


def _call_ids(role: str, contents: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, str, str], ...]:
    """("declare" | "result", call content type, call id) of the linkable calls and results, in content order."""
    out: list[tuple[str, str, str]] = []
    for c in contents:
        call_id = c.get("call_id")
        if not call_id:
            continue
        if role == "assistant" and c["type"] in ("function_call", "computer_tool_call"):
            out.append(("declare", c["type"], call_id))
        elif c["type"] in LINKED_RESULT_TYPES and role in ("assistant", "tool"):
            out.append(("result", LINKED_RESULT_TYPES[c["type"]], call_id))
    return tuple(out)


class History:
    """The framework's message list with its annotations, and the helpers its strategies share."""

    def __init__(self, count_tokens: Callable[[Record], int]) -> None:
        self.records: list[Record] = []
        self._count_tokens = count_tokens

    # ---------------------------------------------------------------------------------------------- tokens
    def tokens(self, r: Record) -> int:
        if r.tokens is None:
            r.tokens = self._count_tokens(r)
        return r.tokens

    def included(self) -> list[Record]:
        return [r for r in self.records if not r.excluded]

    def included_tokens(self) -> int:
        return sum(self.tokens(r) for r in self.records if not r.excluded)

    def included_messages(self) -> int:
        return sum(1 for r in self.records if not r.excluded)

    # ---------------------------------------------------------------------------------------------- grouping
    def _assign_ids(self, start: int) -> None:
        """Missing ids become ``msg_<absolute index>``; on collision the next free number from the slice's end."""
        taken = {r.message_id for r in self.records if r.message_id}
        end = len(self.records)
        for i in range(start, end):
            r = self.records[i]
            if r.message_id:
                continue
            candidate, number = f"msg_{i}", end
            while candidate in taken:
                candidate, number = f"msg_{number}", number + 1
            r.message_id = candidate
            taken.add(candidate)

    def _spans(self, start: int) -> list[dict[str, Any]]:
        """Group spans of ``records[start:]`` (absolute indices), tool results linked to their unique calls."""
        recs = self.records
        n = len(recs)
        spans: list[dict[str, Any]] = []
        i = start
        while i < n:
            r = recs[i]
            role = r.message.role
            kind, end, reasoning = "assistant_text", i, "text_reasoning" in r.types
            if role in ("system", "user"):
                kind = role
            elif _is_reasoning_only(r) or _is_tool_call_assistant(r):
                j = i
                while j < n and _is_reasoning_only(recs[j]):
                    j += 1
                if j < n and _is_tool_call_assistant(recs[j]):
                    reasoning = reasoning or "text_reasoning" in recs[j].types or j > i
                    k = j + 1
                    while k < n and _is_reasoning_only(recs[k]):
                        reasoning, k = True, k + 1
                    while k < n and recs[k].message.role == "tool":
                        k += 1
                    kind, end = "tool_call", k - 1
            elif role == "tool":
                k = i + 1
                while k < n and recs[k].message.role == "tool":
                    k += 1
                kind, end, reasoning = "tool_call", k - 1, False
            spans.append({"group_id": f"group_{r.message_id}", "kind": kind, "start": i, "end": end,
                          "has_reasoning": reasoning})
            i = end + 1
        self._link(spans, start)
        return spans

    def _link(self, spans: list[dict[str, Any]], start: int) -> None:
        """Union-find: a result whose call id matches exactly one earlier unmatched call joins the call's group."""
        if len(spans) < 2:
            return
        span_of = {m: s for s, span in enumerate(spans) for m in range(span["start"], span["end"] + 1)}
        parent = list(range(len(spans)))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        unmatched: dict[tuple[str, str], list[int]] = {}
        linked = False
        for m in range(start, len(self.records)):
            for role, call_type, call_id in self.records[m].calls:
                if role == "declare":
                    unmatched.setdefault((call_type, call_id), []).append(m)
                    continue
                candidates = unmatched.get((call_type, call_id))
                if candidates is None or len(candidates) != 1:
                    continue
                declaration, result = span_of[candidates.pop()], span_of[m]
                if declaration < result:
                    a, b = find(result), find(declaration)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
                        linked = True
        if not linked:
            return
        reasoning: dict[int, bool] = {}
        for s, span in enumerate(spans):
            reasoning[find(s)] = reasoning.get(find(s), False) or span["has_reasoning"]
        for s, span in enumerate(spans):
            span["group_id"] = spans[find(s)]["group_id"]
            span["has_reasoning"] = reasoning[find(s)]

    def _start_of_group_before(self, index: int) -> int:
        if index <= 0:
            return 0
        previous = index - 1
        gid = self.records[previous].group_id
        if gid is None:
            return previous
        while previous > 0 and self.records[previous - 1].group_id == gid:
            previous -= 1
        return previous

    def _widen_to_declarations(self, start: int) -> int:
        """Back to the earliest call (and its group's start) that a result in the slice may link to."""
        unmatched: dict[tuple[str, str], list[int]] = {}
        matching: list[int] = []
        for m, r in enumerate(self.records):
            for role, call_type, call_id in r.calls:
                if role == "declare":
                    unmatched.setdefault((call_type, call_id), []).append(m)
                    continue
                candidates = unmatched.get((call_type, call_id))
                if not candidates:
                    continue
                if m >= start:
                    matching.extend(c for c in candidates if c < start)
                if len(candidates) == 1:
                    candidates.pop()
        if not matching:
            return start
        earliest = min(matching)
        gid = self.records[earliest].group_id
        if gid is None:
            return earliest
        while earliest > 0 and self.records[earliest - 1].group_id == gid:
            earliest -= 1
        return earliest

    def annotate(self, from_index: int | None = None) -> list[str]:
        """``annotate_message_groups``: re-group from the first un-annotated message (or ``from_index``), widened
        back to the start of the group before it and to any call a new result links to. Returns the group ids in
        order of first appearance."""
        if not self.records:
            return []
        if from_index is not None:
            start = max(0, min(from_index, len(self.records) - 1))
        else:
            start = next((i for i, r in enumerate(self.records) if r.group_id is None), None)
            if start is None:
                return self.ordered_group_ids()
        start = self._widen_to_declarations(self._start_of_group_before(start))
        offset = max((r.group_index for r in self.records[:start] if r.group_index is not None), default=-1) + 1
        self._assign_ids(start)
        spans = self._spans(start)
        span_counts: dict[str, int] = {}
        for span in spans:
            span_counts[span["group_id"]] = span_counts.get(span["group_id"], 0) + 1
        indices: dict[str, int] = {}
        linked: dict[str, list[Record]] = {}
        for span in spans:
            gid = span["group_id"]
            indices.setdefault(gid, offset + len(indices))
            for m in range(span["start"], span["end"] + 1):
                r = self.records[m]
                r.group_id, r.kind, r.group_index, r.has_reasoning = gid, span["kind"], indices[gid], span["has_reasoning"]
                if span_counts[gid] > 1:
                    linked.setdefault(gid, []).append(r)
        for members in linked.values():  # a linked group is included as a whole when any member is
            if any(not r.excluded for r in members):
                for r in members:
                    r.excluded = False
        return self.ordered_group_ids()

    # ---------------------------------------------------------------------------------------------- group views
    def ordered_group_ids(self) -> list[str]:
        return list(dict.fromkeys(r.group_id for r in self.records if r.group_id is not None))

    def grouped(self) -> dict[str, list[Record]]:
        out: dict[str, list[Record]] = {}
        for r in self.records:
            if r.group_id is not None:
                out.setdefault(r.group_id, []).append(r)
        return out

    def kinds(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for r in self.records:
            if r.group_id is not None and r.kind is not None:
                out.setdefault(r.group_id, r.kind)
        return out

    def starts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for i, r in enumerate(self.records):
            if r.group_id is not None:
                out.setdefault(r.group_id, i)
        return out

    def included_group_ids(self, ordered: Sequence[str]) -> list[str]:
        grouped = self.grouped()
        return [g for g in ordered if any(not r.excluded for r in grouped.get(g, []))]

    def minimum_retained(self, ordered: Sequence[str], kinds: Mapping[str, str]) -> set[str]:
        """The group kept so the projection is never empty: the last included non-system group (or last group)."""
        included = self.included_group_ids(ordered)
        non_system = [g for g in included if kinds.get(g) != "system"]
        if non_system:
            return {non_system[-1]}
        return {included[-1]} if included else set()

    def exclude_groups(self, group_ids: Sequence[str] | set[str], reason: str) -> bool:
        """Exclude every message of the groups (the reason is written even on already excluded ones)."""
        changed = False
        wanted = set(group_ids)
        for r in self.records:
            if r.group_id in wanted:
                changed = changed or not r.excluded
                r.excluded, r.reason = True, reason
        return changed

    def insert(self, position: int, entry: Entry) -> None:
        """Insert a summary message (its ``message_id`` in meta) and re-annotate from there."""
        self.records.insert(position, _record(entry))
        self.annotate(from_index=position)

    def entries(self) -> list[Entry]:
        return [r.stored() for r in self.records]

    def replace_content(self, r: Record, entry: Entry) -> None:
        """Give record ``r`` a new entry (content replaced in place): its count and content types are redone."""
        fresh = _record(entry)
        r.entry, r.types, r.calls, r.tokens, r._excluded_entry = entry, fresh.types, fresh.calls, None, None


# ------------------------------------------------------------------------------------------------- strategies
@dataclass
class Outcome:
    """What one strategy call did: its own condition fired, the inclusion changed, a short account."""

    triggered: bool
    changed: bool
    note: str = ""
    model_calls: list[dict[str, int]] = field(default_factory=list)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class TruncationStrategy:
    """``TruncationStrategy(max_n, compact_to, tokenizer, preserve_system, preserve_first_user_group)``."""

    REASON = "truncation"

    def __init__(self, max_n: int, compact_to: int, use_tokens: bool = True, preserve_system: bool = True,
                 preserve_first_user_group: bool = False) -> None:
        if max_n <= 0:
            raise ValueError("max_n must be greater than 0.")
        if compact_to <= 0:
            raise ValueError("compact_to must be greater than 0.")
        if compact_to > max_n:
            raise ValueError("compact_to must be less than or equal to max_n.")
        self.max_n, self.compact_to, self.use_tokens = max_n, compact_to, use_tokens
        self.preserve_system, self.preserve_first_user_group = preserve_system, preserve_first_user_group

    def metric(self, h: History) -> int:
        return h.included_tokens() if self.use_tokens else h.included_messages()

    def weight(self, h: History, r: Record) -> int:
        return h.tokens(r) if self.use_tokens else 1

    def __call__(self, h: History) -> Outcome:
        ordered = h.ordered_group_ids()
        metric = self.metric(h)  # kept up to date below instead of recounted before every group
        if metric <= self.max_n:
            return Outcome(False, False)
        grouped, kinds = h.grouped(), h.kinds()
        protected = {g for g in ordered if kinds.get(g) == "system"} if self.preserve_system else set()
        if self.preserve_first_user_group:
            first_user = next((g for g in ordered if kinds.get(g) == "user"), None)
            if first_user is not None:
                protected.add(first_user)
        protected |= h.minimum_retained(ordered, kinds)
        changed, removed = False, 0
        for gid in ordered:
            if metric <= self.compact_to:
                break
            if gid in protected:
                continue
            group_changed = False
            for r in grouped.get(gid, []):
                if not r.excluded:
                    group_changed, metric = True, metric - self.weight(h, r)
                r.excluded, r.reason = True, self.REASON
            changed = changed or group_changed
            removed += group_changed
        unit = "tokens" if self.use_tokens else "messages"
        note = (f"over max_n={self.max_n} {unit}: excluded the {_plural(removed, 'oldest group')} toward "
                f"compact_to={self.compact_to}" if changed else "over max_n, but only protected groups are left")
        return Outcome(True, changed, note)


class SlidingWindowStrategy:
    """``SlidingWindowStrategy(keep_last_groups, preserve_system)``: on every call, keep the newest N included
    non-system groups (and system groups)."""

    REASON = "sliding_window"

    def __init__(self, keep_last_groups: int, preserve_system: bool = True) -> None:
        if keep_last_groups <= 0:
            raise ValueError(f"keep_last_groups must be more than 0, got {keep_last_groups}")
        self.keep_last_groups, self.preserve_system = keep_last_groups, preserve_system

    def __call__(self, h: History) -> Outcome:
        ordered, kinds = h.ordered_group_ids(), h.kinds()
        included = h.included_group_ids(ordered)
        non_system = [g for g in included if kinds.get(g) != "system"]
        keep = set(non_system[-self.keep_last_groups:])
        if self.preserve_system:
            keep |= {g for g in ordered if kinds.get(g) == "system"}
        dropped = [g for g in included if g not in keep]
        changed = h.exclude_groups(dropped, self.REASON)
        return Outcome(changed, changed, f"excluded {_plural(len(dropped), 'group')} outside the last "
                                         f"{self.keep_last_groups}" if changed else "")


class _ToolGroupStrategy:
    """Shared part of the two strategies that keep only the newest N included tool-call groups."""

    def __init__(self, keep_last_tool_call_groups: int = 1) -> None:
        if keep_last_tool_call_groups < 0:
            raise ValueError("keep_last_tool_call_groups must be greater than or equal to 0.")
        self.keep = keep_last_tool_call_groups

    def older_tool_groups(self, h: History) -> list[str]:
        ordered, kinds = h.ordered_group_ids(), h.kinds()
        tool_groups = [g for g in h.included_group_ids(ordered) if kinds.get(g) == "tool_call"]
        if len(tool_groups) <= self.keep:
            return []
        return tool_groups[: len(tool_groups) - self.keep] if self.keep else tool_groups


class SelectiveToolCallCompactionStrategy(_ToolGroupStrategy):
    """``SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1)``: exclude older tool-call groups."""

    REASON = "tool_call_compaction"

    def __call__(self, h: History) -> Outcome:
        older = self.older_tool_groups(h)
        changed = h.exclude_groups(older, self.REASON) if older else False
        return Outcome(changed, changed, f"excluded {_plural(len(older), 'older tool-call group')}" if changed else "")


SUMMARY_PREFIX, SUMMARY_SUFFIX, TRUNCATION_MARKER, SUMMARY_MAX_CHARS = "[Tool results: ", "]", "... [truncated]", 4096


def tool_results_text(labels: Sequence[str]) -> str:
    """``[Tool results: name: result; …]`` capped at 4096 characters."""
    label = "; ".join(labels) if labels else "no results"
    text = f"{SUMMARY_PREFIX}{label}{SUMMARY_SUFFIX}"
    if len(text) <= SUMMARY_MAX_CHARS:
        return text
    allowed = SUMMARY_MAX_CHARS - len(SUMMARY_PREFIX) - len(TRUNCATION_MARKER) - len(SUMMARY_SUFFIX)
    if allowed <= 0:
        return f"{SUMMARY_PREFIX}{TRUNCATION_MARKER}{SUMMARY_SUFFIX}"
    return f"{SUMMARY_PREFIX}{label[:allowed].rstrip()}{TRUNCATION_MARKER}{SUMMARY_SUFFIX}"


def _result_labels(members: Sequence[Record]) -> list[str]:
    names: dict[str, str] = {}
    live = [r for r in members if not r.excluded]
    for r in live:
        for c in contents_of(r.message):
            if c["type"] == "function_call" and c.get("call_id") and c.get("name"):
                names[c["call_id"]] = c["name"]
    labels: list[str] = []
    for r in live:
        for c in contents_of(r.message):
            if c["type"] == "function_result":
                result = c.get("result")
                text = result if isinstance(result, str) else str(result)
                name = names.get(c.get("call_id") or "", "")
                labels.append((f"{name}: {text}" if name else text).strip())
    return labels


class ToolResultCompactionStrategy(_ToolGroupStrategy):
    """``ToolResultCompactionStrategy(keep_last_tool_call_groups=1)``: every older tool-call group is excluded and
    an assistant ``[Tool results: …]`` message is inserted before it."""

    REASON = "tool_result_compaction"

    def __call__(self, h: History) -> Outcome:
        older = self.older_tool_groups(h)
        changed = False
        for gid in older:
            members = h.grouped().get(gid, [])
            text = tool_results_text(_result_labels(members))
            summary_id = f"tool_summary_{gid}"
            for r in members:
                changed = changed or not r.excluded
                r.excluded, r.reason = True, self.REASON
            digest = Message(role="assistant", texts=(text,), meta={"message_id": summary_id})
            entry = inserted(digest, "digest", covers=[r.entry for r in members],
                             strategy="ToolResultCompactionStrategy", summary_of_group_ids=[gid])
            h.insert(h.starts().get(gid, 0), entry)
        return Outcome(changed, changed, f"collapsed {_plural(len(older), 'older tool-call group')} into "
                                         "[Tool results: …] messages" if changed else "")


# ---------------------------------------------------------------------------------------------- summarization
DEFAULT_PYTHON_SUMMARY_PROMPT = (
    "Summarize the whole conversation so far in at most five sentences. Cover what both the user and the assistant "
    "contributed, keep the context needed to carry on, fold in any earlier summary without dropping its details, "
    "and stress the points that matter most. Do not critique, correct, interpret or speculate, do not point out "
    "mistakes, and do not mention anything that is not in the conversation."
)


def _value_text(value: Any) -> str:
    """How the framework renders arguments and results as text: strings as-is, mappings as JSON."""
    import json

    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _render_item(item: Mapping[str, Any]) -> str:
    """A function result item in the transcript: its text, an error label, else ``<type> content (details)`` (an
    empty text item too)."""
    if item.get("type") == "text" and item.get("text"):
        return item["text"]
    if item.get("type") == "error":
        label = item.get("message") or ""
        if item.get("error_details"):
            label = f"{label}: {item['error_details']}" if label else item["error_details"]
        if item.get("error_code"):
            label = f"error({item['error_code']}): {label}"
        return label
    details = [f"media_type={item['media_type']}"] if item.get("media_type") else []
    if item.get("type") == "uri" and item.get("uri"):
        details.append(f"uri={item['uri']}")
    path = (item.get("additional_properties") or {}).get("path")
    if item.get("type") == "data" and isinstance(path, str) and path:
        details.append(f"path={path}")
    details += [f"{key}={item[key]}" for key in ("file_id", "name") if item.get(key)]
    return f"{item.get('type')} content" + (f" ({', '.join(details)})" if details else "")


def _render_content(c: Mapping[str, Any]) -> str:
    call_id = f" [call_id={c['call_id']}]" if c.get("call_id") else ""
    if c["type"] == "function_call":
        args = _value_text(c["arguments"]) if c.get("arguments") is not None else ""
        return f"function_call {c.get('name') or ''}({args}){call_id}"
    if c["type"] == "function_result":
        text = "\n".join(label for i in c.get("items") or () if (label := _render_item(i)))
        if not text:
            text = _value_text(c["result"]) if c.get("result") is not None else "no result"
        if c.get("exception") is not None:
            text = f"error: {text}"
        return f"function_result: {text}{call_id}"
    return ""


def transcript_line(number: int, message: Message) -> str:
    """``<n>. [<role>] <content>``: rendered parts joined by ``; ``, consecutive texts merged with a space."""
    parts: list[str] = []
    pending: list[str] = []
    contents = contents_of(message)
    for c in contents:
        rendered = _render_content(c)
        if rendered:
            if pending:
                parts.append(" ".join(pending))
                pending = []
            parts.append(rendered)
        elif c["type"] == "text" and c.get("text"):
            pending.append(c["text"])
    if pending:
        parts.append(" ".join(pending))
    body = "; ".join(parts) or ", ".join(c["type"] for c in contents)
    return f"{number}. [{message.role}] {body}"


def transcript(messages: Sequence[Message], start: int = 1) -> str:
    return "\n".join(transcript_line(i, m) for i, m in enumerate(messages, start=start))


class SummarizationStrategy:
    """``SummarizationStrategy(client, target_count=4, threshold=2, prompt, max_summary_input_tokens=8000,
    tokenizer)``."""

    REASON = "summarized"

    def __init__(self, summarizer, count_text: Callable[[str], int], counter: Counter, target_count: int = 4,
                 threshold: int | None = 2, prompt: str | None = None, max_summary_input_tokens: int | None = 8000,
                 summary_tokens: int = 512) -> None:
        if target_count <= 0:
            raise ValueError("target_count must be greater than 0.")
        if threshold is not None and threshold < 0:
            raise ValueError("threshold must be greater than or equal to 0.")
        if max_summary_input_tokens is not None and max_summary_input_tokens <= 0:
            raise ValueError("max_summary_input_tokens must be greater than 0.")
        self.summarizer, self.count_text, self.counter = summarizer, count_text, counter
        self.target_count, self.threshold = target_count, threshold or 0
        self.prompt = prompt or DEFAULT_PYTHON_SUMMARY_PROMPT
        self.max_summary_input_tokens = max_summary_input_tokens
        self.summary_tokens = summary_tokens
        self.consecutive_failures = 0

    def _select(self, candidates: Sequence[tuple[str, list[Record]]]) -> tuple[list[str], list[Record]]:
        """Whole groups, oldest first, while prompt + transcript fit the input budget (a leading misfit is
        skipped; after the first accepted group the first misfit stops)."""
        if self.max_summary_input_tokens is None:
            return [g for g, _ in candidates], [r for _, rs in candidates for r in rs]
        ids: list[str] = []
        chosen: list[Record] = []
        prompt_tokens = self.count_text(self.prompt)
        separator = self.count_text("\n")
        text_tokens = 0
        for gid, records in candidates:
            candidate = text_tokens + self.count_text(transcript([r.message for r in records], len(chosen) + 1))
            if chosen:
                candidate += separator
            if prompt_tokens + candidate > self.max_summary_input_tokens:
                if not chosen:
                    continue
                break
            ids.append(gid)
            chosen.extend(records)
            text_tokens = candidate
        return ids, chosen

    def _fail(self, reason: str) -> Outcome:
        self.consecutive_failures += 1
        repeated = f" ({self.consecutive_failures} failures in a row)" if self.consecutive_failures >= 3 else ""
        return Outcome(True, False, f"skipped: {reason}{repeated}")

    def __call__(self, h: History) -> Outcome:
        from ..summarizers import SummaryRequest

        ordered, grouped, kinds, starts = h.ordered_group_ids(), h.grouped(), h.kinds(), h.starts()
        groups: list[tuple[str, list[Record]]] = []
        for gid in h.included_group_ids(ordered):
            if kinds.get(gid) == "system":
                continue
            members = [r for r in grouped.get(gid, []) if not r.excluded]
            if members:
                groups.append((gid, members))
        count = sum(len(rs) for _, rs in groups)
        if count <= self.target_count + self.threshold:
            return Outcome(False, False)
        keep: set[str] = set()
        retained = 0
        for gid, members in reversed(groups):
            if retained >= self.target_count and keep:
                break
            keep.add(gid)
            retained += len(members)
        candidates = [(gid, rs) for gid, rs in groups if gid not in keep]
        if not candidates:
            return Outcome(True, False, "nothing older than the retained groups")
        ids, chosen = self._select(candidates)
        if not chosen:
            return self._fail("no complete message group fits within max_summary_input_tokens")
        messages = [r.message for r in chosen]
        request = SummaryRequest(self.prompt, transcript(messages), tuple(messages), self.summary_tokens)
        try:
            call = self.summarizer.summarize(request, self.counter)
        except Exception as exc:  # noqa: BLE001 - the framework catches any summarizer failure
            return self._fail(f"summary generation failed ({exc})")
        text = call.text.strip()
        if not text:
            return self._fail("the summarizer returned no text")
        self.consecutive_failures = 0
        summary_id = f"summary_{len(h.records)}"
        for r in chosen:
            r.excluded, r.reason = True, self.REASON
        summary = Message(role="assistant", texts=(text,), meta={"message_id": summary_id})
        entry = inserted(summary, "summary", covers=[r.entry for r in chosen], strategy="SummarizationStrategy",
                         backend=call.backend, simulated=call.simulated, summary_of_group_ids=ids)
        h.insert(min(starts[g] for g in ids if g in starts), entry)
        notice = f" ({call.notice})" if call.notice else ""
        return Outcome(True, True, f"{count} messages > target_count + threshold: summarized "
                                   f"{_plural(len(chosen), 'message')} in {_plural(len(ids), 'group')}{notice}",
                       [call.usage()])


# ------------------------------------------------------------------------------------------ composed strategies
class TokenBudgetComposedStrategy:
    """``TokenBudgetComposedStrategy(token_budget, tokenizer, strategies, early_stop=True)`` with its fallback."""

    def __init__(self, token_budget: int, strategies: Sequence[Callable[[History], Outcome]],
                 early_stop: bool = True) -> None:
        self.token_budget, self.strategies, self.early_stop = token_budget, list(strategies), early_stop

    def __call__(self, h: History) -> Outcome:
        h.annotate()
        if h.included_tokens() <= self.token_budget:
            return Outcome(False, False)
        changed, notes, calls = False, [], []
        for i, strategy in enumerate(self.strategies, start=1):
            outcome = strategy(h)
            changed = changed or outcome.changed
            calls += outcome.model_calls
            if outcome.note:
                label = strategy.name if isinstance(strategy, NestedPythonChild) else type(strategy).__name__
                notes.append(f"{i}. {label}: {outcome.note}")
            h.annotate()
            if self.early_stop and h.included_tokens() <= self.token_budget:
                return Outcome(True, changed, "; ".join(notes), calls)
        if h.included_tokens() <= self.token_budget:
            return Outcome(True, changed, "; ".join(notes), calls)
        ordered = h.annotate()
        grouped, kinds = h.grouped(), h.kinds()
        retained = h.minimum_retained(ordered, kinds)
        tokens = h.included_tokens()  # kept up to date below instead of recounted after every group
        for reason, wanted in (("token_budget_fallback", lambda k: k != "system"),
                               ("token_budget_fallback_strict", lambda k: k == "system")):
            removed = 0
            for gid in ordered:
                if not wanted(kinds.get(gid)) or gid in retained:
                    continue
                for r in grouped.get(gid, []):
                    if not r.excluded:
                        changed, removed, tokens = True, removed + 1, tokens - h.tokens(r)
                    r.excluded, r.reason = True, reason
                if tokens <= self.token_budget:
                    break
            if removed:
                notes.append(f"{reason}: excluded {_plural(removed, 'message')}")
            if tokens <= self.token_budget:
                break
        return Outcome(True, changed, "; ".join(notes), calls)


class NestedPythonChild:
    """Any registered strategy as a ``TokenBudgetComposedStrategy`` child (see :mod:`._nesting`): it acts on the
    included messages with its own trigger; what it replaced becomes the record's new content, what it removed is
    excluded (reason: the child's strategy name), and what it inserted becomes a new message of the list (the child's
    role and text, an id of its own, ``_summary_of_message_ids`` / ``_summary_of_group_ids`` links to the messages it
    covers) right after the message it followed."""

    def __init__(self, nested: NestedStrategy) -> None:
        self.nested = nested

    @property
    def name(self) -> str:
        return self.nested.name

    def __call__(self, h: History) -> Outcome:
        h.annotate()
        records = h.included()
        result = self.nested.run([r.entry for r in records])
        if not result.changed:
            return Outcome(result.triggered, False, result.note, result.model_calls)
        for position, message in result.replaced.items():
            r = records[position]
            h.replace_content(r, r.entry.replaced(message, nested_in=self.name))
        removed = [records[k] for k in result.removed]
        for r in removed:
            r.excluded, r.reason = True, self.name
        after: dict[int | None, Record] = {}
        for previous, entry in result.inserted:
            anchor = after.get(previous) or (records[previous] if previous is not None else None)
            if anchor is not None:
                position = h.records.index(anchor) + 1
            else:
                position = h.records.index(records[0]) if records else len(h.records)
            h.insert(position, self._entry(h, entry, removed))
            after[previous] = h.records[position]
        if result.replaced:  # new content may change a message's kind (e.g. a tool call's inputs cleared)
            h.annotate(from_index=min(h.records.index(records[k]) for k in result.replaced))
        return Outcome(True, True, describe(result), result.model_calls)

    def _entry(self, h: History, entry: Entry, removed: Sequence[Record]) -> Entry:
        """The child's inserted entry with an id of its own and the framework's ``_summary_of_*`` links."""
        covered = set(entry.represents)
        links = [r for r in removed if (r.entry.origin in covered if r.entry.inserted is None
                                        else bool(covered.intersection(r.entry.represents)))]
        taken = {r.message_id for r in h.records}
        number = len(h.records)
        while f"nested_summary_{number}" in taken:
            number += 1
        message_ids = [r.message_id for r in links if r.message_id]
        group_ids = list(dict.fromkeys(r.group_id for r in links if r.group_id))
        group = {"_summary_of_message_ids": message_ids, "_summary_of_group_ids": group_ids}
        message = replace(entry.message, meta={**entry.message.meta, "message_id": f"nested_summary_{number}",
                                               "_group": group})
        nested = inserted_entry(entry, self.name, message)
        return replace(nested, info={**nested.info, "summary_of_message_ids": message_ids,
                                     "summary_of_group_ids": group_ids})


class ContextWindowCompactionStrategy:
    """``ContextWindowCompactionStrategy(max_context_window_tokens, max_output_tokens, tokenizer,
    tool_eviction_threshold=0.5, truncation_threshold=0.8, keep_last_tool_call_groups=4,
    preserve_first_user_group=False)``."""

    def __init__(self, max_context_window_tokens: int, max_output_tokens: int, tool_eviction_threshold: float = 0.5,
                 truncation_threshold: float = 0.8, keep_last_tool_call_groups: int = 4,
                 preserve_first_user_group: bool = False) -> None:
        if max_context_window_tokens <= 0:
            raise ValueError("max_context_window_tokens must be positive.")
        if max_output_tokens < 0 or max_output_tokens >= max_context_window_tokens:
            raise ValueError("max_output_tokens must be >= 0 and < max_context_window_tokens.")
        if not 0.0 < tool_eviction_threshold <= 1.0:
            raise ValueError("tool_eviction_threshold must be in (0.0, 1.0].")
        if not 0.0 < truncation_threshold <= 1.0:
            raise ValueError("truncation_threshold must be in (0.0, 1.0].")
        if truncation_threshold < tool_eviction_threshold:
            raise ValueError("truncation_threshold must be >= tool_eviction_threshold.")
        self.input_budget = max_context_window_tokens - max_output_tokens
        self.tool_eviction_tokens = int(self.input_budget * tool_eviction_threshold)
        self.truncation_tokens = int(self.input_budget * truncation_threshold)
        self.tool_eviction = ToolResultCompactionStrategy(keep_last_tool_call_groups)
        self.truncation = TruncationStrategy(self.truncation_tokens, self.tool_eviction_tokens,
                                             preserve_first_user_group=preserve_first_user_group)

    def lines(self) -> dict[str, float]:
        return {"trigger": self.tool_eviction_tokens, "truncation": self.truncation_tokens,
                "input_budget": self.input_budget}

    def __call__(self, h: History) -> Outcome:
        h.annotate()
        changed, notes, triggered = False, [], False
        if h.included_tokens() > self.tool_eviction_tokens:
            triggered = True
            outcome = self.tool_eviction(h)
            changed = outcome.changed
            notes.append(f"tool eviction: {outcome.note or 'no older tool-call group'}")
            h.annotate()
        if h.included_tokens() > self.truncation_tokens:
            triggered = True
            outcome = self.truncation(h)
            changed = outcome.changed or changed
            notes.append(f"truncation: {outcome.note}")
        if h.included_tokens() > self.input_budget:
            notes.append(f"warning: still over the input budget of {self.input_budget} tokens")
        return Outcome(triggered, changed, "; ".join(notes))


# ------------------------------------------------------------------------------------------------------ runner
def token_counter(counter: Counter) -> Callable[[Record], int]:
    """Per-message token counts: ``CharacterEstimatorTokenizer`` over the message JSON (with the id the framework
    assigned) for ``maf-python``, else the given counter applied to the single message."""
    if counter.spec == "maf-python":
        return lambda r: max(1, len(token_json(r.message, r.message_id or "")) // 4)
    return lambda r: counter.count((r.message,))


def text_counter(counter: Counter) -> Callable[[str], int]:
    """Token count of a plain text (the summarization input budget): ``max(1, len // 4)`` for ``maf-python``."""
    if counter.spec == "maf-python":
        return lambda text: max(1, len(text) // 4)
    return lambda text: counter.count((Message("user", (text,)),))


class PythonRunner(Runner):
    """A Python strategy applied before every model call, as ``apply_compaction`` does in the function loop."""

    persistence = "flag"

    def __init__(self, strategy: Callable[[History], Outcome], counter: Counter,
                 lines: Mapping[str, float] | None = None) -> None:
        self.strategy = strategy
        self.history = History(token_counter(counter))
        self._lines = dict(lines or {})

    def append(self, entry: Entry) -> None:
        self.history.records.append(_record(entry))

    def entries(self) -> Sequence[Entry]:
        return self.history.entries()

    def measure(self) -> int:
        self.history.annotate()
        return self.history.included_tokens()

    def lines(self) -> dict[str, float]:
        return self._lines

    def before_call(self) -> CallOutcome:
        before = self.measure()
        outcome = self.strategy(self.history)
        self.history.annotate()
        return CallOutcome(tokens_before=before, tokens_sent=self.measure(), triggered=outcome.triggered,
                           compacted=outcome.changed, note=outcome.note, model_calls=outcome.model_calls)


# ------------------------------------------------------------------------------------------------ registrations
TOKENIZERS = ("character_estimator", "replay_counter")
TOKENIZER_PARAM = Param(
    "tokenizer", "choice", "character_estimator", "tokenizer (the strategy's, or apply_compaction's for the counts "
    "shown): `character_estimator` is the framework's CharacterEstimatorTokenizer (len(message JSON) // 4 per message, "
    "the maf-python counter); `replay_counter` counts each message with the replay's --counter instead.",
    choices=TOKENIZERS)


def _counter(params: Mapping[str, Any], ctx: RunContext) -> Counter:
    return make_counter("maf-python") if params.get("tokenizer", TOKENIZERS[0]) == TOKENIZERS[0] else ctx.counter


StrategyMaker = Callable[[Mapping[str, Any], RunContext], tuple[Callable[[History], Outcome], dict]]


def _make_truncation(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict]:
    tokens = p["metric"] == "tokens"
    max_n = p["max_n"] or (int(ctx.context_window * ctx.compact_at) if tokens else 0)
    compact_to = p["compact_to_n"] or (int(ctx.context_window * ctx.compact_to) if tokens else 0)
    strategy = TruncationStrategy(max_n, compact_to, tokens, p["preserve_system"], p["preserve_first_user_group"])
    return strategy, ({"trigger": max_n, "target": compact_to} if tokens else {})


def _make_sliding_window(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict]:
    return SlidingWindowStrategy(p["keep_last_groups"], p["preserve_system"]), {}


def _make_selective(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict]:
    return SelectiveToolCallCompactionStrategy(p["keep_last_tool_call_groups"]), {}


def _make_tool_result(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict]:
    return ToolResultCompactionStrategy(p["keep_last_tool_call_groups"]), {}


def _make_summarization(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict]:
    counter = _counter(p, ctx)
    strategy = SummarizationStrategy(ctx.summarizer(p), text_counter(counter), counter, p["target_count"],
                                     p["threshold"], p["prompt"] or None, p["max_summary_input_tokens"] or None,
                                     p["summary_tokens"])
    return strategy, {}


def _make_context_window(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict]:
    strategy = ContextWindowCompactionStrategy(p["max_context_window_tokens"] or ctx.context_window,
                                               p["max_output_tokens"], p["tool_eviction_threshold"],
                                               p["truncation_threshold"], p["keep_last_tool_call_groups"],
                                               p["preserve_first_user_group"])
    return strategy, strategy.lines()


CHILDREN: dict[str, StrategyMaker] = {
    "truncation": _make_truncation,
    "sliding_window": _make_sliding_window,
    "selective_tool_call": _make_selective,
    "tool_result_compaction": _make_tool_result,
    "summarization": _make_summarization,
    "context_window": _make_context_window,
}


def _make_token_budget(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict]:
    from .base import get_strategy

    budget = p["token_budget"] or int(ctx.context_window * ctx.compact_at)
    children: list[Callable[[History], Outcome]] = []
    shared = {k: p[k] for k in ("tokenizer", *(s.name for s in SUMMARIZER_PARAMS))}
    for position, (name, args) in enumerate(parse_pipeline(p["children"], CHILDREN), start=1):
        short = native_name(name, "agent_framework_python", CHILDREN)
        if short is None:
            children.append(NestedPythonChild(make_nested(name, args, shared, ctx,
                                                          f"strategies child {position} ({name})")))
            continue
        name = short
        info = get_strategy(f"agent_framework_python.{name}")
        inherited = {k: v for k, v in shared.items() if k in {q.name for q in info.params} and k not in args}
        try:
            values = info.resolve_params({**inherited, **args})
        except ValueError as exc:
            raise ValueError(f"strategies child {position} ({name}): {exc}") from None
        children.append(CHILDREN[name](values, ctx)[0])
    return TokenBudgetComposedStrategy(budget, children, p["early_stop"]), {"trigger": budget}


def _builder(make: StrategyMaker) -> Callable[[Mapping[str, Any], RunContext], Runner]:
    def build(params: Mapping[str, Any], ctx: RunContext) -> Runner:
        strategy, lines = make(params, ctx)
        return PythonRunner(strategy, _counter(params, ctx), lines)

    return build


KEEP_TOOL_GROUPS = Param("keep_last_tool_call_groups", "int", 1, "keep_last_tool_call_groups: the newest included "
                         "tool-call groups left as they are (0 = none).", minimum=0, maximum=500)
NO_TRIGGER = " It has no trigger and acts before every model call: compact_at and compact_to are not used."

SPECS: tuple[tuple[str, str, str, tuple[Param, ...], StrategyMaker, str, str], ...] = (
    ("truncation", "TruncationStrategy",
     "When the included tokens (or messages) exceed max_n, excludes whole groups oldest first until the count is at "
     "most compact_to. System groups, optionally the first user group, and the newest non-system group are kept. "
     "max_n / compact_to default to context_window × compact_at / compact_to.",
     (Param("max_n", "int", 0, "max_n: trigger when the metric is above this. 0 = context_window × compact_at (token "
            "metric only).", minimum=0, maximum=10_000_000),
      Param("compact_to_n", "int", 0, "compact_to: exclude groups until the metric is at most this. 0 = "
            "context_window × compact_to (token metric only).", minimum=0, maximum=10_000_000),
      Param("metric", "choice", "tokens", "What max_n and compact_to count: `tokens` (a tokenizer is given) or "
            "`messages` (no tokenizer: included message count).", choices=("tokens", "messages")),
      Param("preserve_system", "bool", True, "preserve_system: never exclude system groups."),
      Param("preserve_first_user_group", "bool", False, "preserve_first_user_group: never exclude the first user "
            "group (the original request)."),
      TOKENIZER_PARAM),
     _make_truncation, "threshold", "truncationstrategy"),
    ("sliding_window", "SlidingWindowStrategy",
     "Keeps only the newest keep_last_groups non-system groups (and system groups); everything older is excluded, "
     "the user's request included." + NO_TRIGGER,
     (Param("keep_last_groups", "int", 8, "keep_last_groups: how many of the newest non-system groups stay "
            "included (the framework requires it; 8 is this tool's default).", minimum=1, maximum=500),
      Param("preserve_system", "bool", True, "preserve_system: system groups always stay included."),
      TOKENIZER_PARAM),
     _make_sliding_window, "none", "slidingwindowstrategy"),
    ("selective_tool_call", "SelectiveToolCallCompactionStrategy",
     "Excludes every tool-call group (the call with its results) except the newest keep_last_tool_call_groups."
     + NO_TRIGGER,
     (KEEP_TOOL_GROUPS, TOKENIZER_PARAM),
     _make_selective, "none", "selectivetoolcallcompactionstrategy"),
    ("tool_result_compaction", "ToolResultCompactionStrategy",
     "Replaces every tool-call group except the newest keep_last_tool_call_groups with one assistant message "
     "'[Tool results: name: result; …]' (at most 4096 characters) placed before it." + NO_TRIGGER,
     (KEEP_TOOL_GROUPS, TOKENIZER_PARAM),
     _make_tool_result, "none", "toolresultcompactionstrategy"),
    ("summarization", "SummarizationStrategy",
     "When more than target_count + threshold non-system messages are included, summarizes the older groups "
     "(a numbered transcript, within max_summary_input_tokens) into one plain assistant message and keeps about "
     "target_count messages. Counts messages, not tokens: compact_at and compact_to are not used.",
     (Param("target_count", "int", 4, "target_count: non-system messages to keep after summarizing.", minimum=1,
            maximum=1000),
      Param("threshold", "int", 2, "threshold: extra messages allowed above target_count before summarizing.",
            minimum=0, maximum=1000),
      Param("max_summary_input_tokens", "int", 8000, "max_summary_input_tokens: token budget of the summarizer "
            "request (prompt + transcript); whole groups are taken oldest first. 0 = no budget (None).",
            minimum=0, maximum=1_000_000),
      Param("prompt", "str", "", "prompt: the summarizer instruction. Empty = a paraphrase of the framework's "
            "default (at most five sentences, both sides, keep earlier summaries).", advanced=True),
      TOKENIZER_PARAM, *SUMMARIZER_PARAMS),
     _make_summarization, "none", "summarizationstrategy"),
    ("token_budget_composed", "TokenBudgetComposedStrategy",
     "When the included tokens exceed token_budget, runs its child strategies in order until under budget, then "
     "falls back to excluding the oldest groups (system groups last, the newest group never). Any registered "
     "strategy may be a child, by its full name.",
     (Param("token_budget", "int", 0, "token_budget: the included-token limit. 0 = context_window × compact_at.",
            minimum=0, maximum=10_000_000),
      Param("children", "str", "tool_result_compaction(keep_last_tool_call_groups=4); sliding_window("
            "keep_last_groups=24)", "strategies: the child strategies in order, separated by ';', each with its own "
            "parameters in parentheses: truncation, sliding_window, selective_tool_call, tool_result_compaction, "
            "summarization, context_window, or any registered strategy by its full name, e.g. "
            "`anthropic.clear_tool_uses_20250919(keep=2); sliding_window(keep_last_groups=12)` (the framework has "
            "no default list; this is this tool's). A nested strategy of another family uses its own trigger or "
            "threshold (compact_at / compact_to of the replay's context window for threshold strategies), acts on "
            "the included messages, and its edits are written back: replaced content in place, removed messages "
            "excluded (reason: its name), summaries as new messages linked to what they cover."),
      Param("early_stop", "bool", True, "early_stop: stop after the first child that brings the tokens within "
            "the budget."),
      TOKENIZER_PARAM, *SUMMARIZER_PARAMS),
     _make_token_budget, "threshold", "tokenbudgetcomposedstrategy"),
    ("context_window", "ContextWindowCompactionStrategy",
     "Input budget = window − max_output_tokens. Above half of it, collapses all but the newest 4 tool-call groups "
     "into [Tool results: …]; above 80%, excludes the oldest groups down to half the budget. Uses only the context "
     "window: compact_at and compact_to are not used.",
     (Param("max_context_window_tokens", "int", 0, "max_context_window_tokens: the model's window. 0 = the replay's "
            "context window setting.", minimum=0, maximum=10_000_000),
      Param("max_output_tokens", "int", 16_384, "max_output_tokens: the model's output limit, subtracted from the "
            "window.", minimum=0, maximum=1_000_000),
      Param("tool_eviction_threshold", "float", 0.5, "tool_eviction_threshold: share of the input budget above "
            "which older tool-call groups are collapsed.", minimum=0.0, maximum=1.0),
      Param("truncation_threshold", "float", 0.8, "truncation_threshold: share of the input budget above which the "
            "oldest groups are excluded (down to tool_eviction_threshold).", minimum=0.0, maximum=1.0),
      Param("keep_last_tool_call_groups", "int", 4, "keep_last_tool_call_groups: tool-call groups never collapsed.",
            minimum=0, maximum=500),
      Param("preserve_first_user_group", "bool", False, "preserve_first_user_group: truncation keeps the first "
            "user group."),
      TOKENIZER_PARAM),
     _make_context_window, "window", "contextwindowcompactionstrategy"),
)

for _name, _title, _summary, _params, _make, _policy, _doc in SPECS:
    register(
        StrategyInfo(
            name=f"agent_framework_python.{_name}",
            family="agent_framework_python",
            title=f"Agent Framework (Python) · {_title}",
            summary=_summary,
            params=_params,
            build=_builder(_make),
            policy=_policy,
            docs_url=f"{DOCS}.{_doc}",
        )
    )
