"""Vercel AI SDK ``pruneMessages`` (npm ``ai`` 7.0.173, ``src/generate-text/prune-messages.ts``), applied in
``prepareStep`` before each model step (agents.md §1.12).

``pruneMessages`` is a pure function over the AI SDK's ``ModelMessage`` list. The stored history is read as that list
(:func:`model_messages`): a system message and a plain user message have string content; an assistant message has
parts in the order the SDK's response messages keep them — reasoning, text, tool calls; the tool results answering
one step form **one** ``tool`` message (the SDK's ``toResponseMessages`` writes them so), which matters for
``before-last-N-messages``. Then, as the package does, in this order:

1. ``reasoning``: ``all`` removes the reasoning parts of every assistant message with part content,
   ``before-last-message`` of all but the list's last message.
2. each ``tool_calls`` rule (a string is one rule): the ids of tool calls and results in the last N messages are
   protected (``before-last-message`` is N = 1, ``all`` protects nothing; N = 0 protects nothing too); in every
   earlier assistant or tool message each tool-call and tool-result part is removed unless its id is protected or
   the rule names ``tools`` and the part's tool is not among them. A run of reasoning parts whose following parts
   (up to the next reasoning) were all removed goes with them. Rules apply one after the other, each over the
   previous rule's result.
3. ``empty_messages``: ``remove`` drops every message whose content is empty (an emptied message, and any message
   that was empty to begin with); ``keep`` sends it with no content.

No placeholder is written: parts vanish. The package has no approval parts to prune in a replayed log (our logs have
no ``tool-approval-*`` parts), so the approval-id protection never applies.

**When, and what persists.** The package measures nothing; the app decides when to prune. The AI SDK docs show it two
ways, and both are parameters here: before every step (the API reference and the Academy's ``prepareCall``:
``compact_after_tokens = 0``), or, as the cookbook's *Compact Agent Context* guide does, only when
``JSON.stringify(messages).length / 4 > COMPACT_AFTER_TOKENS`` (``compact_after_tokens > 0``, the estimate computed
over the same ``ModelMessage`` JSON). In both the result is **persistent**: the SDK's step loop continues from the
list ``prepareStep`` returned (``messagesForNextStep = [...stepMessages, ...responseMessages]``) and the guide says
so ("that changed list persists into later steps"), so this is a rewrite, not a projection. It matters: pruned
before every step with one ``toolCalls`` rule and no tool call id used twice, the persistent list equals one prune of the whole history (what a
chat route that prunes the stored messages per request sends), but with two rules of different N the messages an
earlier step emptied no longer count in later windows, and with the token trigger what was pruned stays pruned
below the threshold. ``tests/test_vercel_ai_differential.py`` drives the package both ways.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from ..conversation import Message
from ..conversation import ToolCall
from ..errors import ConfigError
from ..history import Entry
from ..tokens import Counter
from .base import Param
from .base import RunContext
from .base import StrategyInfo
from .base import register
from .contract import Call
from .contract import Strategy
from .history_runner import plural

DOCS = "https://ai-sdk.dev/docs/reference/ai-sdk-ui/prune-messages"
REASONING_CHOICES = ("none", "all", "before-last-message")
EMPTY_CHOICES = ("remove", "keep")
_LAST_N = re.compile(r"before-last-(\d+)-messages")
#: part types pruneMessages treats as tool content, and as reasoning
TOOL_PARTS = frozenset({"tool-call", "tool-result"})
REASONING_PARTS = frozenset({"reasoning", "reasoning-file"})


# ------------------------------------------------------------------------------------------------ the options
@dataclass(frozen=True)
class ToolRule:
    """One ``toolCalls`` rule: keep the tool parts of the last ``keep_last`` messages (None: ``all``); ``tools``
    limits the rule to those tools (None: every tool)."""

    keep_last: int | None
    tools: tuple[str, ...] | None = None

    @property
    def type(self) -> str:
        if self.keep_last is None:
            return "all"
        return "before-last-message" if self.keep_last == 1 else f"before-last-{self.keep_last}-messages"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **({"tools": list(self.tools)} if self.tools is not None else {})}


def _rule_type(text: Any, where: str) -> int | None:
    if text == "all":
        return None
    if text == "before-last-message":
        return 1
    match = _LAST_N.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ConfigError(f"{where}: expected 'all', 'before-last-message' or 'before-last-N-messages' (N a whole "
                         f"number), got {text!r}")
    return int(match.group(1))


def parse_tool_calls(value: Any) -> tuple[ToolRule, ...]:
    """The ``toolCalls`` option as rules: ``none``, ``all``, ``before-last-message``, ``before-last-N-messages``, or
    the package's list form as JSON, ``[{"type": "before-last-2-messages", "tools": ["read_file"]}, …]``."""
    if isinstance(value, str):
        text = value.strip()
        if text in ("", "none", "[]"):
            return ()
        if not text.startswith("["):
            return (ToolRule(_rule_type(text, "tool_calls")),)
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"tool_calls: the list form must be JSON ({exc.msg} at character {exc.pos})") from None
        except ValueError as exc:  # JSON that Python refuses to read, e.g. an integer of more than 4,300 digits
            raise ConfigError(f"tool_calls: the list form could not be read ({exc})") from None
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"tool_calls: expected an option string or a list of rules, got {value!r}")
    rules = []
    for n, item in enumerate(value):
        where = f"tool_calls[{n}]"
        if not isinstance(item, Mapping) or "type" not in item:
            raise ConfigError(f"{where}: expected an object {{\"type\": …, \"tools\": [...]}}, got {item!r}")
        unknown = set(item) - {"type", "tools"}
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; a rule has type "
                             "and tools")
        tools = item.get("tools")
        if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)):
            raise ConfigError(f"{where}.tools: expected a list of tool names, got {tools!r}")
        rules.append(ToolRule(_rule_type(item["type"], f"{where}.type"), None if tools is None else tuple(tools)))
    return tuple(rules)


def tool_calls_option(rules: Sequence[ToolRule]) -> str | list[dict[str, Any]]:
    """The rules as the package's ``toolCalls`` value: a string when it is one rule for every tool."""
    if not rules:
        return "none"
    if len(rules) == 1 and rules[0].tools is None:
        return rules[0].type
    return [r.to_json() for r in rules]


# ------------------------------------------------------------------------------------------------ ModelMessages
@dataclass(frozen=True)
class Part:
    """One part of a ``ModelMessage``, with where it came from: entry ``entry`` (a stored position), its
    ``kind``'s ``index``-th item (the text, reasoning or tool call of a message; 0 for a tool result)."""

    type: str
    entry: int
    index: int
    tool_call_id: str | None = None
    tool_name: str | None = None


@dataclass
class ModelMessage:
    """A ``ModelMessage``: its role, and its content as parts (``text`` holds string content instead)."""

    role: str
    parts: list[Part] = field(default_factory=list)
    text: str | None = None
    #: the stored positions this message is made of (several tool entries form one tool message)
    entries: tuple[int, ...] = ()

    @property
    def has_parts(self) -> bool:
        return self.text is None

    @property
    def empty(self) -> bool:
        return not self.text if self.text is not None else not self.parts


def _string_content(message: Message) -> bool:
    """System messages, and user messages with one text and nothing else, have string content."""
    return message.role == "system" or (message.role == "user" and len(message.texts) == 1 and not message.images
                                        and not message.files)


def _parts_of(message: Message, position: int) -> list[Part]:
    if message.tool_result is not None:
        origin = message.tool_result.origin
        return [Part("tool-result", position, 0, origin.id, origin.name)]
    parts = [Part("reasoning", position, i) for i in range(len(message.reasoning))]
    parts += [Part("text", position, i) for i in range(len(message.texts))]
    parts += [Part("image", position, i) for i in range(len(message.images))]
    parts += [Part("file", position, i) for i in range(len(message.files))]
    parts += [Part("tool-call", position, i, c.id, c.name) for i, c in enumerate(message.tool_calls)]
    return parts


def model_messages(entries: Sequence[Entry], tool_runs: Mapping[int, int] | None = None) -> list[ModelMessage]:
    """The stored history as the AI SDK's ``ModelMessage`` list. Consecutive tool results form one tool message;
    ``tool_runs`` (original index -> the run it was appended in) keeps two runs apart when what separated them has
    been pruned away."""
    out: list[ModelMessage] = []
    run_of_last: int | None = None
    for position, entry in enumerate(entries):
        m = entry.message
        if m.tool_result is not None or m.role == "tool":
            run = tool_runs.get(entry.origin, -1) if tool_runs is not None and entry.origin is not None else -1
            if out and out[-1].role == "tool" and run == run_of_last:
                out[-1].parts += _parts_of(m, position)
                out[-1].entries += (position,)
            else:
                out.append(ModelMessage("tool", _parts_of(m, position), entries=(position,)))
            run_of_last = run
            continue
        run_of_last = None
        if _string_content(m):
            out.append(ModelMessage(m.role, text=m.text, entries=(position,)))
        else:
            out.append(ModelMessage(m.role, _parts_of(m, position), entries=(position,)))
    return out


# ------------------------------------------------------------------------------------------------ pruneMessages
def prune_messages(messages: list[ModelMessage], reasoning: str = "none", rules: Sequence[ToolRule] = (),
                   empty: str = "remove") -> list[ModelMessage]:
    """``pruneMessages`` over ``messages`` (new message objects where parts were removed; the input is unchanged)."""
    if reasoning in ("all", "before-last-message"):
        last = len(messages) - 1
        messages = [replace(m, parts=[p for p in m.parts if p.type not in REASONING_PARTS])
                    if m.role == "assistant" and m.has_parts and not (reasoning == "before-last-message" and i == last)
                    and any(p.type in REASONING_PARTS for p in m.parts) else m
                    for i, m in enumerate(messages)]
    for rule in rules:
        messages = _apply_rule(messages, rule)
    if empty == "remove":
        messages = [m for m in messages if not m.empty]
    return messages


def _apply_rule(messages: list[ModelMessage], rule: ToolRule) -> list[ModelMessage]:
    n = rule.keep_last
    protected: set[str | None] = set()
    if n:
        for m in messages[-n:]:
            if m.role in ("assistant", "tool") and m.has_parts:
                protected.update(p.tool_call_id for p in m.parts if p.type in TOOL_PARTS)
    first_kept = len(messages) - n if n else len(messages)
    out = []
    for i, m in enumerate(messages):
        if m.role not in ("assistant", "tool") or not m.has_parts or i >= first_kept:
            out.append(m)
            continue
        keep = [p.type not in TOOL_PARTS or p.tool_call_id in protected
                or (rule.tools is not None and p.tool_name is not None and p.tool_name not in rule.tools)
                for p in m.parts]
        if m.role == "assistant":
            _drop_orphaned_reasoning(m.parts, keep)
        out.append(m if all(keep) else replace(m, parts=[p for p, k in zip(m.parts, keep) if k]))
    return out


def _drop_orphaned_reasoning(parts: Sequence[Part], keep: list[bool]) -> None:
    """A run of reasoning parts goes when every part after it (up to the next reasoning) is removed."""
    i = 0
    while i < len(parts):
        if parts[i].type not in REASONING_PARTS:
            i += 1
            continue
        end = i
        while end < len(parts) and parts[end].type in REASONING_PARTS:
            end += 1
        follow = end
        while follow < len(parts) and parts[follow].type not in REASONING_PARTS:
            follow += 1
        if follow > end and not any(keep[end:follow]):
            keep[i:end] = [False] * (end - i)
        i = follow


# ------------------------------------------------------------------------------------------------ JSON estimate
def message_json(message: Message, part_types: Sequence[str] | None = None) -> list[Any]:
    """The JSON values of a message's ``ModelMessage`` parts (tool results: the one tool-result part), in part
    order; a string-content message gives ``[text]``."""
    if message.tool_result is not None:
        result = message.tool_result
        part: dict[str, Any] = {"type": "tool-result", **_id(result.origin), "toolName": result.origin.name,
                                "output": {"type": "error-text" if result.error else "text", "value": result.text}}
        return [part]
    if message.role == "tool":
        return []
    if _string_content(message):
        return [message.text]
    parts: list[Any] = [{"type": "reasoning", "text": r} for r in message.reasoning]
    parts += [{"type": "text", "text": t} for t in message.texts]
    parts += [{"type": "image", "image": i.source or "", **({"mediaType": i.mime_type} if i.mime_type else {})}
              for i in message.images]
    parts += [{"type": "file", "data": "", "mediaType": f.mime_type or "application/octet-stream",
               **({"filename": f.filename} if f.filename else {})} for f in message.files]
    parts += [{"type": "tool-call", **_id(c), "toolName": c.name, "input": dict(c.arguments)}
              for c in message.tool_calls]
    return parts


def _id(call: ToolCall) -> dict[str, str]:
    return {"toolCallId": call.id} if call.id is not None else {}


def to_json(messages: Sequence[ModelMessage], entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """``messages`` as the JSON ``ModelMessage`` objects the package takes."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if not m.has_parts:
            out.append({"role": m.role, "content": m.text})
            continue
        content = []
        for p in m.parts:
            values = message_json(entries[p.entry].message)
            content.append(values[_json_index(entries[p.entry].message, p)])
        out.append({"role": m.role, "content": content})
    return out


def _json_index(message: Message, part: Part) -> int:
    """Where ``part`` sits in :func:`message_json` of its message."""
    if part.type == "tool-result":
        return 0
    order = ("reasoning", "text", "image", "file", "tool-call")
    sizes = (len(message.reasoning), len(message.texts), len(message.images), len(message.files),
             len(message.tool_calls))
    return sum(sizes[: order.index(part.type)]) + part.index


def js_json(value: Any) -> str:
    """``JSON.stringify(value)``: no spaces, non-ASCII kept, numbers as JavaScript writes them."""
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if text.isascii() else _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return _js_number(float(value)) if abs(value) >= 2 ** 53 else str(value)
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{js_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(js_json(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def _js_number(x: float) -> str:
    """JavaScript's ``Number.prototype.toString`` for a double (shortest round-trip digits)."""
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0") or "0"
    point = len(whole) + (int(exp) if exp else 0) - (len(whole + frac) - len((whole + frac).lstrip("0")))
    digits = digits.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    body = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{body}e{'+' if e >= 0 else '-'}{abs(e)}"


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_LONE = re.compile("[\ud800-\udfff]")


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (a character past U+FFFF is two)."""
    return len(text) if text.isascii() else len(text) + len(_ASTRAL.findall(text))


class _JsonLengths:
    """``JSON.stringify(messages).length`` of the stored history's ModelMessages, from per-message part lengths
    cached by message identity."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Message, list[int]]] = {}

    def parts(self, message: Message) -> list[int]:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        lengths = [js_length(js_json(v)) for v in message_json(message)]
        self._cache[id(message)] = (message, lengths)
        return lengths

    def total(self, messages: Sequence[ModelMessage], entries: Sequence[Entry]) -> int:
        size = 2 + max(len(messages) - 1, 0)  # [ ] and the commas between messages
        for m in messages:
            size += len('{"role":,"content":}') + len(m.role) + 2
            if not m.has_parts:
                size += self.parts(entries[m.entries[0]].message)[0]
                continue
            size += 2 + max(len(m.parts) - 1, 0)
            for p in m.parts:
                size += self.parts(entries[p.entry].message)[_json_index(entries[p.entry].message, p)]
        return size


# ------------------------------------------------------------------------------------------------ the strategy
class PruneMessages(Strategy):
    """``pruneMessages`` in ``prepareStep``: before every step, or when the cookbook's estimate passes
    ``compact_after_tokens``; what it returns is the message list later steps continue from."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        self.reasoning = str(params["reasoning"])
        if self.reasoning not in REASONING_CHOICES:
            raise ConfigError(f"reasoning must be one of {', '.join(REASONING_CHOICES)}, got {self.reasoning!r}")
        self.rules = parse_tool_calls(params["tool_calls"])
        self.empty = str(params["empty_messages"])
        if self.empty not in EMPTY_CHOICES:
            raise ConfigError(f"empty_messages must be one of {', '.join(EMPTY_CHOICES)}, got {self.empty!r}")
        self.after_tokens = int(params["compact_after_tokens"])
        if self.after_tokens < 0:
            raise ConfigError(f"compact_after_tokens must be at least 0, got {self.after_tokens}")
        self._runs: dict[int, int] = {}
        self._lengths = _JsonLengths()
        self._pruned: tuple[list[ModelMessage], list[ModelMessage]] | None = None
        self.estimate: float | None = None

    def lines(self) -> dict[str, float]:
        return {"trigger": self.after_tokens} if self.after_tokens else {}

    def triggered(self, entries: Sequence[Entry], call: Call) -> bool:
        self._note_runs(entries)
        before = model_messages(entries, self._runs)
        if self.after_tokens:
            self.estimate = self._lengths.total(before, entries) / 4
            self._pruned = (before, [])
            return self.estimate > self.after_tokens
        after = prune_messages(before, self.reasoning, self.rules, self.empty)
        self._pruned = (before, after)
        return _changed(before, after)

    def target(self, entries: Sequence[Entry], call: Call) -> int | None:
        return None

    def compact(self, entries: list[Entry], target: int | None, counter: Counter) -> list[Entry] | None:
        before, after = self._pruned or (model_messages(entries, self._runs), [])
        if self.after_tokens:
            after = prune_messages(before, self.reasoning, self.rules, self.empty)
            if not _changed(before, after):
                self.decline(f"estimate {self.estimate:,.0f} > {self.after_tokens:,}; pruneMessages removed nothing")
                return None
        return self._rebuild(entries, before, after)

    # -------------------------------------------------------------------------------------------- helpers
    def _note_runs(self, entries: Sequence[Entry]) -> None:
        """Give each tool result seen for the first time the run of tool results it was appended in (they are
        appended whole, so adjacent tool results seen together form one tool message)."""
        previous: Entry | None = None
        for entry in entries:
            if entry.origin is not None and entry.origin not in self._runs and _is_tool(entry.message):
                self._runs[entry.origin] = (self._runs.get(previous.origin, entry.origin)
                                            if previous is not None and previous.origin is not None
                                            and _is_tool(previous.message) else entry.origin)
            previous = entry

    def _rebuild(self, entries: list[Entry], before: list[ModelMessage], after: list[ModelMessage]) -> list[Entry]:
        kept: dict[int, set[tuple[str, int]]] = {}
        surviving: set[int] = set()
        for m in after:
            surviving.add(m.entries[0])
            for p in m.parts:
                kept.setdefault(p.entry, set()).add((p.type, p.index))
        out: list[Entry] = []
        removed_parts = removed_messages = 0
        for m in before:
            if m.entries[0] not in surviving:
                removed_messages += 1
                removed_parts += len(m.parts)
                continue
            if not m.has_parts:
                out.append(entries[m.entries[0]])
                continue
            emptied = True
            for position in m.entries:
                entry, wanted = entries[position], kept.get(position, set())
                parts = [p for p in m.parts if p.entry == position]
                removed_parts += len(parts) - len(wanted)
                if len(wanted) == len(parts):
                    out.append(entry)
                    emptied = False
                elif wanted:
                    out.append(entry.replaced(_keep_parts(entry.message, wanted), pruned_by="pruneMessages"))
                    emptied = False
                elif entry.message.role != "tool":
                    out.append(entry.replaced(_keep_parts(entry.message, wanted), pruned_by="pruneMessages"))
                    emptied = False
            if emptied:  # a tool message kept with no content (empty_messages = keep)
                first = entries[m.entries[0]]
                out.append(first.replaced(Message("tool", meta={**first.message.meta, "vercel_ai": "empty"}),
                                          pruned_by="pruneMessages"))
        bits = [plural(removed_parts, "part")]
        if removed_messages:
            bits.append(f"{plural(removed_messages, 'empty message')} dropped")
        self.note("pruneMessages removed " + ", ".join(bits))
        return out


def _is_tool(message: Message) -> bool:
    return message.tool_result is not None or message.role == "tool"


def _changed(before: Sequence[ModelMessage], after: Sequence[ModelMessage]) -> bool:
    return len(before) != len(after) or any(a is not b for a, b in zip(before, after))


def _keep_parts(message: Message, wanted: set[tuple[str, int]]) -> Message:
    """``message`` with only the parts in ``wanted`` (``(type, index)``)."""
    if message.tool_result is not None:
        return message
    return replace(
        message,
        reasoning=tuple(r for i, r in enumerate(message.reasoning) if ("reasoning", i) in wanted),
        texts=tuple(t for i, t in enumerate(message.texts) if ("text", i) in wanted),
        images=tuple(x for i, x in enumerate(message.images) if ("image", i) in wanted),
        files=tuple(x for i, x in enumerate(message.files) if ("file", i) in wanted),
        tool_calls=tuple(c for i, c in enumerate(message.tool_calls) if ("tool-call", i) in wanted),
        meta={**message.meta, "vercel_ai": "pruned"},
    )


register(
    StrategyInfo(
        name="vercel_ai.prune_messages",
        title="Vercel AI SDK · pruneMessages (prepareStep)",
        summary=(
            "pruneMessages before each step: removes reasoning parts, and tool-call/tool-result parts older than "
            "the last N messages (or of the named tools only), then messages left empty. No placeholder; the "
            "pruned list persists into later steps. Prunes by message count: ignores context_window, compact_at and "
            "compact_to (compact_after_tokens is the cookbook's JSON-length trigger)."
        ),
        params=(
            Param("reasoning", "choice", "none", "`reasoning`: remove reasoning parts from assistant messages — "
                  "'all', 'before-last-message' (all but the list's last message) or 'none'.",
                  choices=REASONING_CHOICES),
            Param("tool_calls", "str", "none", "`toolCalls`: 'all', 'before-last-message', "
                  "'before-last-N-messages' (keep the tool calls and results of the last N messages, and their "
                  "pairs by id) or 'none'; or the package's list form as JSON, e.g. "
                  "[{\"type\": \"before-last-2-messages\", \"tools\": [\"read_file\"]}] (only the listed tools)."),
            Param("empty_messages", "choice", "remove", "`emptyMessages`: 'remove' drops messages whose content is "
                  "empty after pruning; 'keep' sends them empty.", choices=EMPTY_CHOICES),
            Param("compact_after_tokens", "int", 0, "The cookbook's COMPACT_AFTER_TOKENS: prune only when "
                  "JSON.stringify(messages).length / 4 exceeds it (0: prune before every step, as the API "
                  "reference does).", minimum=0, maximum=10_000_000),
        ),
        reference=PruneMessages,
        policy="none",
        docs_url=DOCS,
    )
)
