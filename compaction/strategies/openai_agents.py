"""OpenAI Agents SDK session history limit, as released in openai-agents 0.24.0: ``Runner.run(agent, input,
session=session, run_config=RunConfig(session_settings=SessionSettings(limit=N)))`` (agents.md §1.9;
``agents/run_internal/session_persistence.py`` ``prepare_input_with_session``, ``run_internal/items.py``).

The session stores every item of every run; the limit applies only when a run starts (a new user turn): the model
gets the agent's instructions, the session's last ``limit`` **items**, and the new input; within the run every item
the run generates is sent as well, whatever the limit. The stored history is read as Responses items
(:func:`items_of`): a user message is one item; an assistant message is a reasoning item (when it has reasoning), a
message item (when it has text) and one ``function_call`` per tool call, so an assistant message with text and a
tool call is two items; a tool result is one ``function_call_output``. Leading system messages are the agent's
instructions, not session items.

When the run starts, as the SDK prepares its input: of the history items kept, a ``function_call`` whose output is
not in the prepared input is dropped (with the reasoning item right before it), and, because a limit is set, so is
a ``function_call_output`` whose call is gone (the limit cut the call away); items repeating a call id are kept
once (a call at its first place with its last value, an output at its last place). Within the run, a generated
call without an output is dropped with its reasoning. What is sent is recomputed from the stored history at every
call: a projection.

Not replayed: ``OpenAIResponsesCompactionSession``. After a run it sends the session's items to the Responses API's
``responses.compact`` and replaces them with what the server returns (an opaque, encrypted ``compaction`` item and
the items the server chooses to keep); neither that choice nor the size of the compaction item can be known offline,
so a stub client would replay our guess, not the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from ..conversation import Message
from ..conversation import ToolCall
from ..history import Entry
from .base import Param
from .base import RunContext
from .base import StrategyInfo
from .base import register
from .contract import Call
from .contract import Strategy
from .history_runner import count_or_all
from .history_runner import leading_system
from .history_runner import plural

DOCS = "https://openai.github.io/openai-agents-python/sessions/"


@dataclass(frozen=True)
class Item:
    """One Responses input item of a stored entry: ``kind`` is ``message``, ``reasoning``, ``function_call`` or
    ``function_call_output``; ``call`` the tool call of a call item."""

    kind: str
    position: int
    call: ToolCall | None = None

    @property
    def call_id(self) -> str | None:
        return self.call.id if self.call is not None else None


def items_of(message: Message, position: int) -> list[Item]:
    """The Responses items a stored message is, in the order the SDK keeps them."""
    if message.tool_result is not None:
        return [Item("function_call_output", position, message.tool_result.origin)]
    if message.role != "assistant":
        return [Item("message", position)]
    items = [Item("reasoning", position)] if message.reasoning else []
    if message.texts or message.images or message.files:
        items.append(Item("message", position))
    return items + [Item("function_call", position, c) for c in message.tool_calls]


def drop_orphans(items: list[Item], history: int | None = None, outputs_too: bool = False) -> list[Item]:
    """``drop_orphan_function_calls``: among the first ``history`` items (all when None), calls whose output is not
    in ``items`` go, with the reasoning item right before them; with ``outputs_too``, so do outputs whose call is
    not left."""
    considered = len(items) if history is None else history
    answered = {i.call_id for i in items if i.kind == "function_call_output" and i.call_id is not None}
    dropped = {n for n, i in enumerate(items[:considered])
               if i.kind == "function_call" and (i.call_id is None or i.call_id not in answered)}
    triggers = set(dropped)
    if outputs_too:
        available = {i.call_id for n, i in enumerate(items) if i.kind == "function_call" and n not in dropped}
        dropped |= {n for n, i in enumerate(items[:considered])
                    if i.kind == "function_call_output" and i.call_id is not None and i.call_id not in available}
    if not dropped:
        return list(items)
    reasoning: set[int] = set()
    for n in range(len(items) - 1, -1, -1):
        if items[n].kind != "reasoning" or n in dropped:
            continue
        for following in range(n + 1, len(items)):
            if following in reasoning or items[following].kind == "reasoning":
                continue
            if following in triggers:
                reasoning.add(n)
            break
    gone = dropped | reasoning
    return [i for n, i in enumerate(items) if n not in gone]


def deduplicate(items: list[Item]) -> list[Item]:
    """``deduplicate_input_items_preferring_latest``: a call id's call stays at its first place with its last value,
    its output at its last place."""
    latest: dict[tuple[str, str], Item] = {}
    anchor: dict[tuple[str, str], int] = {}
    key: tuple[str, str] | None
    for n, i in enumerate(items):
        if i.kind in ("function_call", "function_call_output") and i.call_id is not None:
            key = (i.kind, i.call_id)
            latest[key] = i
            if key not in anchor or i.kind != "function_call":
                anchor[key] = n
    out = []
    for n, i in enumerate(items):
        key = (i.kind, i.call_id) if i.kind in ("function_call", "function_call_output") and i.call_id else None
        if key is None:
            out.append(i)
        elif anchor[key] == n:
            out.append(replace(latest[key], position=i.position))
    return out


class SessionLimit(Strategy):
    """The session's last ``limit`` items at each run's start, everything the run generated after them."""

    persistence = "project"

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        self.limit = count_or_all(params["limit"], "limit", "a number of items")
        self._seen = 0
        self._run_start: int | None = None

    def lines(self) -> dict[str, float]:
        return {}

    def project(self, entries: list[Entry], call: Call) -> list[Entry] | None:
        start = self._run_start_at(entries)
        instructions = leading_system(entries)
        start = max(start, instructions)
        generated = start
        while generated < len(entries) and entries[generated].message.role in ("user", "system") \
                and entries[generated].message.tool_result is None:
            generated += 1
        history = [i for p in range(instructions, start) for i in items_of(entries[p].message, p)]
        kept = history if self.limit is None else history[max(len(history) - self.limit, 0):] if self.limit else []
        inputs = [i for p in range(start, generated) for i in items_of(entries[p].message, p)]
        prepared = deduplicate(drop_orphans(kept + inputs, len(kept), outputs_too=self.limit is not None))
        generated_items = [i for p in range(generated, len(entries)) for i in items_of(entries[p].message, p)]
        sent = prepared + drop_orphans(generated_items)
        view = self._rebuild(entries, instructions, sent)
        if view is not None:
            left_out = len(history) - len(kept)
            orphans = len(kept) + len(inputs) + len(generated_items) - len(sent)
            bits = [f"session limit {self.limit}: {plural(left_out, 'older item')} not loaded"] if left_out else []
            if orphans:
                bits.append(f"{plural(orphans, 'orphaned or repeated item')} dropped")
            self.note("; ".join(bits))
        return view

    def _run_start_at(self, entries: Sequence[Entry]) -> int:
        """The stored position where the current run's input starts: the first user message appended since the
        previous call, or the run already going on."""
        for position in range(self._seen, len(entries)):
            m = entries[position].message
            if m.role == "user" and m.tool_result is None:
                self._run_start = position
                break
        self._seen = len(entries)
        return self._run_start if self._run_start is not None else 0

    @staticmethod
    def _rebuild(entries: list[Entry], instructions: int, sent: list[Item]) -> list[Entry] | None:
        """The entries ``sent`` stands for (None when it is the stored history itself)."""
        by_position: dict[int, list[Item]] = {}
        for i in sent:
            by_position.setdefault(i.position, []).append(i)
        out = entries[:instructions]
        changed = False
        for p in range(instructions, len(entries)):
            entry = entries[p]
            own = items_of(entry.message, p)
            got = by_position.get(p, [])
            if got == own:
                out.append(entry)
            elif not got:
                changed = True
            else:
                out.append(entry.replaced(_with_items(entry.message, got), left_out_by="session limit"))
                changed = True
        return out if changed else None


def _with_items(message: Message, items: Sequence[Item]) -> Message:
    """An assistant message rebuilt from the items of it that are sent."""
    kinds = {i.kind for i in items}
    if message.tool_result is not None:
        return message
    return replace(message,
                   reasoning=message.reasoning if "reasoning" in kinds else (),
                   texts=message.texts if "message" in kinds else (),
                   images=message.images if "message" in kinds else (),
                   files=message.files if "message" in kinds else (),
                   tool_calls=tuple(i.call for i in items if i.call is not None),
                   meta={**message.meta, "openai_agents": "partial"})


def item_json(item: Item, message: Message) -> dict[str, Any]:
    """An item as the SDK's session stores it (the differential test and the export's example use it)."""
    if item.kind == "function_call_output":
        result = message.tool_result
        assert result is not None
        return {"type": "function_call_output", "call_id": result.call_id, "output": result.text}
    if item.kind == "function_call":
        assert item.call is not None
        return {"type": "function_call", "call_id": item.call.id, "name": item.call.name,
                "arguments": json.dumps(dict(item.call.arguments), ensure_ascii=False)}
    if item.kind == "reasoning":
        return {"type": "reasoning", "summary": [{"type": "summary_text", "text": r} for r in message.reasoning]}
    if message.role == "assistant":
        return {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": t, "annotations": []} for t in message.texts]}
    return {"type": "message", "role": message.role,
            "content": [{"type": "input_text", "text": t} for t in message.texts]}


register(
    StrategyInfo(
        name="openai_agents.session_limit",
        title="OpenAI Agents SDK · SessionSettings(limit)",
        summary=(
            "When a run starts (a new user turn), the session loads only its last `limit` items (a message, a tool "
            "call, a tool output, a reasoning item each count one); calls left without outputs and outputs left "
            "without calls are dropped. Within a run everything generated is sent. Counts items: ignores "
            "context_window, compact_at and compact_to."
        ),
        params=(
            Param("limit", "str", "all", "`SessionSettings.limit`: how many of the session's newest items a run "
                  "loads, or `all` (the SDK's default, None)."),
        ),
        reference=SessionLimit,
        policy="none",
        docs_url=DOCS,
    )
)
