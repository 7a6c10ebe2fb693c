"""Cline's context management (the extension's ``ContextManager``, the path that wrote the task histories found in
the wild; ``agents.md §1.4``). Read at cline/cline 791d2389^, ``src/core/context/context-management/
ContextManager.ts`` and ``context-window-utils.ts``, and ``src/core/prompts/responses.ts``.

Before every request, when the previous request's reported total (tokens in + out + cache writes + cache reads)
reaches ``maxAllowedSize`` (the context window less 27k / 30k / 40k for 64k / 128k / 200k windows, else
max(window − 40k, 80% of the window)):

1. **Repeated file reads.** In the messages still sent after the first user-assistant pair, every read of a file but
   the latest — a ``read_file`` result, the ``<final_file_content>`` of a ``write_to_file`` / ``replace_in_file``
   result, a ``<file_content path=…>`` mention — is replaced by Cline's duplicate-read notice. If that saves at
   least 30% of the characters in context, nothing else happens.
2. **Truncation.** Otherwise the first assistant message's first block becomes the truncation notice (once), and
   half of the messages after the first pair (three quarters when the previous total is more than twice the limit)
   are left out, an even number, the last one left out an assistant message; the tool results of the first message
   kept that answer calls no longer sent are dropped.

Cline keeps the left-out range and the edits beside the full history on disk and applies them to every request;
the replay writes them into the stored history, which sends the same messages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from ..conversation import Message
from ..conversation import tool
from ..history import Entry
from ..history import inserted
from ..tokens import Counter
from ._agent_usage import PreviousCall
from ._api_messages import ApiMessage
from ._api_messages import api_messages
from ._api_messages import blocks
from .base import RunContext
from .base import StrategyInfo
from .base import register
from .contract import Call
from .contract import Strategy
from .history_runner import plural
from .history_runner import with_result_text

DOCS = ("https://github.com/cline/cline/blob/791d2389^/src/core/context/context-management/ContextManager.ts")
#: ``formatResponse.duplicateFileReadNotice()`` (responses.ts)
DUPLICATE_READ_NOTICE = ("[[NOTE] This file read has been removed to save space in the context window. Refer to the "
                         "latest file read for the most up to date version of this file.]")
#: ``formatResponse.contextTruncationNotice()`` (responses.ts)
TRUNCATION_NOTICE = (
    "[NOTE] Some previous conversation history with the user has been removed to maintain optimal context window "
    "length. The initial user task has been retained for continuity, while intermediate conversation history has "
    "been removed. Keep this in mind as you continue assisting the user. Pay special attention to the user's latest "
    "messages.")
#: what ``ensureToolResultsFollowToolUse`` answers a call whose result is not in the next message with
RESULT_MISSING = "result missing"
DEFAULT_CONTEXT_WINDOW = 128_000
#: ``needToTruncate: percentSaved < 0.3``
ENOUGH_SAVED = 0.3
#: the first user-assistant pair is always kept
FIRST_KEPT = 2
_HEADER = re.compile(r"^\[([^\s]+) for '([^']+)'\] Result:")
_MENTION = re.compile(r'<file_content path="([^"]*)">([\s\S]*?)</file_content>')
_FINAL_CONTENT = re.compile(r'(<final_file_content path="[^"]*">)[\s\S]*?(</final_file_content>)')
_MENTION_BLOCKS = 3  # blocks 0-2 are searched for file mentions
EDIT_KEY = "cline_edit"
MENTIONS_KEY = "cline_mentions"


def max_allowed_size(context_window: int) -> int:
    """``getContextWindowInfo``'s ``maxAllowedSize`` for a model's context window."""
    if context_window == 64_000:
        return context_window - 27_000
    if context_window == 128_000:
        return context_window - 30_000
    if context_window == 200_000:
        return context_window - 40_000
    return int(max(context_window - 40_000, context_window * 0.8))


def js_length(text: str) -> int:
    """``String.length`` in JavaScript: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def truncation_size(count: int, keep: str) -> int:
    """How many API messages ``getNextTruncationRange`` leaves out of the ``count`` after the kept ones (even)."""
    if keep == "half":
        return count // 4 * 2
    return (count * 3 // 4) // 2 * 2


# ------------------------------------------------------------------------------------------------ file reads
@dataclass
class _Read:
    """One read of a file found in a user API message, and what the read becomes when it is not the latest."""

    group: int
    kind: str  # "read_file" | "alter_file" | "file_mention"
    position: int  # stored position of the entry holding the block
    part: int | None  # the text part (None: the tool result)
    replacement: str  # the whole block's new text (read / alter) or the mention's new text
    search: str = ""  # file mentions: the matched text


@dataclass
class _Dedupe:
    """The duplicate-read edits of one round: new block texts by (position, part), and the messages they touch."""

    texts: dict[tuple[int, int | None], str] = field(default_factory=dict)
    kinds: dict[int, str] = field(default_factory=dict)
    #: file mentions: (the paths replaced so far, every path the block mentions) by stored position
    mentions: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    groups: set[int] = field(default_factory=set)


def _block_text(entry: Entry, part: int | None) -> str:
    message = entry.message
    if part is None:
        return message.tool_result.text if message.tool_result is not None else ""
    return message.texts[part]


class ContextManager(Strategy):
    """The reference: Cline's duplicate-read edits, then its truncation, written into the stored history."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        self.context_window = self._model_window(ctx)
        self.max_allowed = max_allowed_size(self.context_window)
        self.usage = PreviousCall(self)
        self.previous_total = 0
        self.notice_applied = False

    @staticmethod
    def _model_window(ctx: RunContext) -> int:
        """The model's window, with Cline's fix for DeepSeek behind an OpenAI-compatible provider (128k)."""
        window = ctx.context_window or DEFAULT_CONTEXT_WINDOW
        source = ctx.source
        if source is not None and source.meta.get("provider") == "openai" and "deepseek" in (source.model or "").lower():
            return DEFAULT_CONTEXT_WINDOW
        return window

    def lines(self) -> dict[str, float]:
        return {"trigger": self.max_allowed}

    def triggered(self, entries: Sequence[Entry], call: Call) -> bool:
        self.usage.begin(entries, call)
        total = self.usage.total()
        if total is None:
            return False
        self.previous_total = total
        return total >= self.max_allowed

    def target(self, entries: Sequence[Entry], call: Call) -> int | None:
        return None

    # ------------------------------------------------------------------------------------------ compact
    def compact(self, entries: list[Entry], target: int | None, counter: Counter) -> Sequence[Entry] | None:
        keep = "quarter" if self.previous_total / 2 > self.max_allowed else "half"
        groups = api_messages(entries)
        found = self._duplicate_reads(entries, groups)
        notes: list[str] = []
        truncate = True
        if found.texts:
            saved = self._share_saved(entries, groups, found)
            truncate = saved < ENOUGH_SAVED
            self._apply(entries, found)
            notes.append(f"replaced {plural(len(found.texts), 'repeated file read')} (saved {saved:.0%} of the "
                         "characters" + (", under 30%: truncating" if truncate else "") + ")")
        result = entries
        if truncate:
            result, note = self._truncate(entries, api_messages(entries), keep)
            notes.append(note)
        self.note(f"previous request {self.previous_total:,} ≥ {self.max_allowed:,} tokens: " + "; ".join(notes))
        self.usage.sent(self.count(result))
        return result

    # ------------------------------------------------------------------------------------------ step 1
    def _duplicate_reads(self, stored: Sequence[Entry], groups: Sequence[ApiMessage]) -> _Dedupe:
        """``getPossibleDuplicateFileReads`` + ``applyFileReadContextHistoryUpdates``: every read but the latest."""
        reads: dict[str, list[_Read]] = {}
        all_mentions: dict[int, tuple[str, ...]] = {}
        for g in range(FIRST_KEPT, len(groups)):
            group = groups[g]
            if group.role != "user":
                continue
            members = group.entries(stored)
            replaced_before = self._earlier_edit(members)
            if replaced_before is None:
                continue
            texts = blocks(members)
            if not texts:
                continue
            k, part, first = texts[0]
            normal = self._normal_read(g, group.start + k, part, first, reads)
            if normal:
                continue
            for k, part, text in texts[:_MENTION_BLOCKS]:
                paths = self._mentions(g, group.start + k, part, text, replaced_before, reads)
                if paths:
                    all_mentions[g] = paths
                    break
        out = _Dedupe()
        replaced: dict[int, list[str]] = {}
        for path, found in reads.items():
            for read in found[:-1]:
                out.groups.add(read.group)
                key = (read.position, read.part)
                out.kinds[read.position] = read.kind
                if read.kind != "file_mention":
                    out.texts[key] = read.replacement
                    continue
                base = out.texts.get(key, _block_text(stored[read.position], read.part))
                out.texts[key] = base.replace(read.search, read.replacement, 1)
                earlier = stored[read.position].info.get(MENTIONS_KEY, ((), ()))[0]
                replaced.setdefault(read.position, list(earlier)).append(path)
        for position, mentioned in replaced.items():
            group_index = next(g for g in out.groups if groups[g].start <= position < groups[g].end)
            out.mentions[position] = (tuple(mentioned), all_mentions.get(group_index, tuple(mentioned)))
        return out

    @staticmethod
    def _earlier_edit(members: Sequence[Entry]) -> tuple[str, ...] | None:
        """The mentioned files already replaced in this message (empty: none), or None when Cline skips the message
        (an earlier edit of another kind, or every mention already replaced)."""
        replaced: tuple[str, ...] = ()
        for entry in members:
            kind = entry.info.get(EDIT_KEY)
            if kind is None:
                continue
            if kind != "file_mention":
                return None
            done, every = entry.info.get(MENTIONS_KEY, ((), ()))
            if len(done) == len(every):
                return None
            replaced = tuple(done)
        return replaced

    @staticmethod
    def _normal_read(g: int, position: int, part: int | None, text: str, reads: dict[str, list[_Read]]) -> bool:
        """A ``read_file`` / ``write_to_file`` / ``replace_in_file`` result in the first block (``parseToolCallWith
        Format``); True when it is one of those (a file change with no final content is still one)."""
        match = _HEADER.match(text)
        if match is None:
            return False
        tool, path = match.group(1), match.group(2)
        if tool == "read_file":
            reads.setdefault(path, []).append(
                _Read(g, "read_file", position, part, match.group(0) + "\n" + DUPLICATE_READ_NOTICE))
            return True
        if tool in ("replace_in_file", "write_to_file"):
            if _FINAL_CONTENT.search(text):
                new = _FINAL_CONTENT.sub(lambda m: f"{m.group(1)} {DUPLICATE_READ_NOTICE} {m.group(2)}", text, 1)
                reads.setdefault(path, []).append(_Read(g, "alter_file", position, part, new))
            return True
        return False

    @staticmethod
    def _mentions(g: int, position: int, part: int | None, text: str, replaced: tuple[str, ...],
                  reads: dict[str, list[_Read]]) -> tuple[str, ...]:
        """``handlePotentialFileMentionCalls``: every ``<file_content>`` of the block, recorded unless replaced."""
        paths: list[str] = []
        for match in _MENTION.finditer(text):
            path = match.group(1)
            paths.append(path)
            if path not in replaced:
                new = f'<file_content path="{path}">{DUPLICATE_READ_NOTICE}</file_content>'
                reads.setdefault(path, []).append(_Read(g, "file_mention", position, part, new, match.group(0)))
        return tuple(paths)

    def _share_saved(self, stored: Sequence[Entry], groups: Sequence[ApiMessage], found: _Dedupe) -> float:
        """``calculateContextOptimizationMetrics``: characters saved / characters in context (the first pair and
        everything after it), counting text blocks only."""
        total = saved = 0
        for group in groups:
            for k, part, text in self._text_blocks(group, stored):
                position = group.start + k
                length = js_length(text)
                total += length
                new = found.texts.get((position, part))
                if new is not None:
                    saved += length - js_length(new)
        return saved / total if total else 0.0

    @staticmethod
    def _text_blocks(group: ApiMessage, stored: Sequence[Entry]) -> list[tuple[int, int | None, str]]:
        members = group.entries(stored)
        if group.role == "user":
            return blocks(members)
        return [(k, j, t) for k, e in enumerate(members) for j, t in enumerate(e.message.texts)]

    @staticmethod
    def _apply(entries: list[Entry], found: _Dedupe) -> None:
        by_position: dict[int, dict[int | None, str]] = {}
        for (position, part), text in found.texts.items():
            by_position.setdefault(position, {})[part] = text
        for position, parts in by_position.items():
            entry = entries[position]
            message = entry.message
            if None in parts and message.tool_result is not None:
                message = with_result_text(message, parts[None])
            texts = list(message.texts)
            for part, text in parts.items():
                if part is not None:
                    texts[part] = text
            message = replace(message, texts=tuple(texts))
            info: dict[str, Any] = {EDIT_KEY: found.kinds[position]}
            if position in found.mentions:
                info[MENTIONS_KEY] = found.mentions[position]
            entries[position] = entry.replaced(message, **info)

    # ------------------------------------------------------------------------------------------ step 2
    def _truncate(self, entries: list[Entry], groups: list[ApiMessage], keep: str) -> tuple[list[Entry], str]:
        notice = self._notice(entries, groups)
        removable = max(len(groups) - FIRST_KEPT, 0)
        end = FIRST_KEPT + truncation_size(removable, keep) - 1
        if end < len(groups) and groups[end].role != "assistant":
            end -= 1
        if end < FIRST_KEPT:
            return entries, "truncation left nothing out" + notice
        cut_from, cut_to = groups[FIRST_KEPT].start, groups[end].end
        kept = [*entries[:cut_from], *entries[cut_to:]]
        orphans = self._orphan_results(kept, cut_from)
        after = [e for i, e in enumerate(kept[cut_from:], cut_from) if i not in orphans]
        if end + 1 < len(groups):  # a message follows the cut (its content may be empty now)
            after = [*_missing_results(entries[groups[1].start:groups[1].end], after), *after]
        kept = [*kept[:cut_from], *after]
        count = end - FIRST_KEPT + 1
        share = "three quarters" if keep == "quarter" else "half"
        note = f"truncated {share}: left out {plural(count, 'message')} after the first pair" + notice
        if orphans:
            note += f", and {plural(len(orphans), 'tool result')} whose calls went with them"
        added = sum(1 for e in kept if e.info.get(EDIT_KEY) == "result_missing")
        if added:
            note += f"; {plural(added, 'call')} of the first assistant message answered 'result missing'"
        return kept, note

    def _notice(self, entries: list[Entry], groups: Sequence[ApiMessage]) -> str:
        """``applyStandardContextTruncationNoticeChange``: the first assistant message's first block, if it is text,
        becomes the truncation notice (registered once, whatever the block)."""
        if self.notice_applied or len(groups) < FIRST_KEPT or groups[1].role != "assistant":
            return ""
        self.notice_applied = True
        position = groups[1].start
        message = entries[position].message
        if message.reasoning or not message.texts and not _xml_calls(message):
            return " (the first assistant message starts with no text block: the notice changes nothing)"
        if _xml_calls(message):  # the calls were written in that same text block
            new = replace(message, texts=(TRUNCATION_NOTICE,), tool_calls=())
        else:
            new = replace(message, texts=(TRUNCATION_NOTICE, *message.texts[1:]))
        entries[position] = entries[position].replaced(new, **{EDIT_KEY: "notice"})
        return "; the first assistant message now holds the truncation notice"

    @staticmethod
    def _orphan_results(kept: Sequence[Entry], first_kept: int) -> set[int]:
        """Tool results of the first message after the cut whose calls were left out (``tool_result`` blocks;
        results Cline wrote as text, for XML calls, stay)."""
        sent_calls = {c.id for e in kept if e.message.role == "assistant" for c in e.message.tool_calls}
        out: set[int] = set()
        i = first_kept
        while i < len(kept) and kept[i].message.role != "assistant":
            result = kept[i].message.tool_result
            if result is not None and result.call_id not in sent_calls and not _is_xml_id(result.call_id):
                out.add(i)
            i += 1
        return out


def _missing_results(first_answer: Sequence[Entry], after: Sequence[Entry]) -> list[Entry]:
    """``ensureToolResultsFollowToolUse`` (ContextManager.ts 366-470) at the cut: each ``tool_use`` of the first
    assistant message whose result is not in the message after it (its results went with the cut) is answered
    ``result missing`` there, results first."""
    calls = [c for e in first_answer for c in e.message.tool_calls if c.id and not _is_xml_id(c.id)]
    answered = set()
    for entry in after:
        if entry.message.role == "assistant":
            break
        if entry.message.tool_result is not None:
            answered.add(entry.message.tool_result.call_id)
    return [inserted(tool(c, RESULT_MISSING), "note", (), **{EDIT_KEY: "result_missing"})
            for c in calls if c.id not in answered]


def _is_xml_id(call_id: str | None) -> bool:
    return bool(call_id) and call_id.startswith("xml-")  # type: ignore[union-attr]


def _xml_calls(message: Message) -> bool:
    """The calls were XML in the text (the Cline reader names them ``xml-…``), not ``tool_use`` blocks."""
    return bool(message.tool_calls) and all(_is_xml_id(c.id) for c in message.tool_calls)


register(
    StrategyInfo(
        name="cline.context_manager",
        title="Cline · ContextManager (duplicate reads, then truncation)",
        summary=(
            "When the previous request's reported total reaches maxAllowedSize (context_window less 27k / 30k / 40k "
            "for 64k / 128k / 200k windows, else max(window − 40k, 80%)), repeated file reads but the latest become "
            "Cline's notice; unless that saves 30% of the characters, half (or three quarters) of the messages "
            "after the first user-assistant pair are left out and the first assistant message holds the "
            "truncation notice. Uses the window only; ignores compact_at/compact_to."
        ),
        params=(),
        reference=ContextManager,
        policy="window",
        docs_url=DOCS,
    )
)
