"""Choosing the log (a bundled sample, an upload, or a session on this machine) and showing what was read from it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

import compaction
from compaction.conversation import Conversation
from compaction.discover import FoundSession
from compaction.discover import format_of
from compaction.discover import matching_conversations
from compaction.formats.base import compressed_suffixes

from . import cache
from . import local_sessions
from .text import escape_markdown

DEFAULT_SAMPLE = "coding_agent.openai.json"
SAMPLE_SUFFIXES = (".json", ".jsonl")
AUTO_FORMAT = "auto-detect"
MAX_WARNINGS_SHOWN = 200

SAMPLE_KEY = "log.sample"
UPLOAD_KEY = "log.upload"
UPLOADED_PICK_KEY = "log.upload.pick"
FORMAT_KEY = "log.format"
CONVERSATION_KEY = "log.conversation"
LOCAL_CONVERSATION_SET_KEY = "log.local.conversation_set"
#: written by the fleet view's "Open in the explorer" buttons
OPEN_LOG_KEY = "fleet_open_log"


@dataclass(frozen=True)
class LogChoice:
    """The bytes of the log to replay and where they came from."""

    name: str
    data: bytes
    origin: str  # "sample" | "upload" | "fleet" (opened from the fleet view) | "local" (a session on this machine)
    format: str | None = None
    #: the content hash when it is already known (hashing megabytes on every rerun is avoidable)
    known_digest: str | None = None
    #: a local log kept as a folder (a Cline task, OpenCode's storage): read from there, ``data`` is empty
    folder: str | None = None
    #: the conversation to open first, for a local session inside a log of several
    conversation: str | None = None

    @cached_property
    def key(self) -> str:
        """The content hash: what caches key on."""
        return self.known_digest or cache.digest(self.data)


def bundled_samples(folder: Path) -> list[Path]:
    """Every ``.json`` / ``.jsonl`` file in ``folder``, the default sample first."""
    if not folder.is_dir():
        return []
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(SAMPLE_SUFFIXES))
    return sorted(files, key=lambda p: p.name != DEFAULT_SAMPLE)


def upload_types() -> list[str]:
    """File extensions the uploader accepts: every registered format's, plus JSON and JSONL."""
    extensions = {".json", ".jsonl", *compressed_suffixes()}  # compressed logs are recognised by their bytes
    for info in compaction.formats().values():
        extensions.update(info.extensions)
    return sorted(ext.lstrip(".") for ext in extensions)


def read_log(choice: LogChoice) -> list[Conversation]:
    """The conversations of a chosen log (cached by content). Raises ``LoadError`` with a readable reason. The first
    time a local session inside a log of several is read, its conversation becomes the one shown."""
    if choice.folder is not None:
        conversations = parse_folder(choice.key, choice.folder, choice.format)
    else:
        folder = os.path.dirname(choice.name) if choice.origin == "local" else None
        conversations = cache.parse_log(choice.key, choice.name, choice.format, choice.data, folder)
    if choice.conversation is not None and st.session_state.get(LOCAL_CONVERSATION_SET_KEY) != choice.key:
        st.session_state[LOCAL_CONVERSATION_SET_KEY] = choice.key
        matching = matching_conversations(conversations, choice.conversation)
        if matching:
            st.session_state[CONVERSATION_KEY] = matching[0].id
    return conversations


@st.cache_resource(max_entries=4, show_spinner=False)
def parse_folder(key: str, folder: str, format: str | None) -> list[Conversation]:
    """Every conversation of a log kept as a folder on this machine (``key``: the folder's version)."""
    return compaction.load_all_conversations(folder, format=format)


def local_log(session: FoundSession, forced_format: str | None) -> LogChoice:
    """A session found on this machine as the log to replay: a file's bytes (read once per version of the file), or
    a folder read where it lies. ``OSError`` when it cannot be read any more."""
    fmt = forced_format or format_of(session)
    if os.path.isdir(session.path):
        version = cache.digest(f"{session.path}\0{session.modified}\0{session.size}".encode())
        return LogChoice(session.path, b"", "local", fmt, f"folder:{version}", folder=session.path,
                         conversation=session.conversation)
    stat = os.stat(session.path)
    data, known = cache.sample_file(session.path, stat.st_mtime_ns, stat.st_size)
    return LogChoice(session.path, data, "local", fmt, known, conversation=session.conversation)


def choose_log(samples_dir: Path) -> LogChoice | None:
    """Sidebar: pick a bundled sample or upload a log, and optionally force its format."""
    st.header("Log", divider="gray")
    samples = bundled_samples(samples_dir)
    sample = None
    if samples:
        sample = st.selectbox(
            "Bundled sample",
            samples,
            format_func=lambda p: p.name,
            key=SAMPLE_KEY,
            help="Realistic agent runs shipped with the app. An uploaded log takes precedence while it is loaded.",
        )
    else:
        st.caption(f"No bundled samples in {escape_markdown(str(samples_dir))}.")
    uploads = st.file_uploader(
        "Or upload logs",
        type=upload_types(),
        accept_multiple_files=True,
        key=UPLOAD_KEY,
        help="Drag and drop one or more agent logs in any supported format (OpenAI chat completions, Haystack or "
        "Agent Framework message lists, Claude Code, Inspect, tau2-bench, …), then pick one. They stay in this "
        "session's memory only.",
    )
    upload = pick_upload(list(uploads or []))
    local = local_sessions.choose_local_session()
    names = list(compaction.formats())
    chosen_format = st.selectbox(
        "Format",
        [AUTO_FORMAT, *names],
        key=FORMAT_KEY,
        help="Leave on auto-detect unless the log is read as the wrong format; forcing a format explains why a "
        "file does not fit it.",
    )
    fmt = None if chosen_format == AUTO_FORMAT else chosen_format
    opened = fleet_log()
    if opened is not None:
        return LogChoice(opened["name"], opened["data"], "fleet", fmt)
    if upload is not None:
        data = upload.getvalue()
        return LogChoice(upload.name, data, "upload", fmt, cache.upload_digest(upload.file_id, len(data), data))
    if local is not None:
        try:
            return local_log(local, fmt)
        except OSError as exc:
            st.warning(f"**This session cannot be read any more** — {escape_markdown(str(exc.strerror or exc))}. "
                       "Choose *Look again* to refresh the list.", icon=":material/warning:")
    if sample is not None:
        stat = sample.stat()
        data, known = cache.sample_file(str(sample), stat.st_mtime_ns, stat.st_size)
        return LogChoice(sample.name, data, "sample", fmt, known)
    return None


def fleet_log() -> dict[str, Any] | None:
    """A log the fleet view asked to open (``fleet_open_log``), with a way back to the sample or upload."""
    opened = st.session_state.get(OPEN_LOG_KEY)
    if not isinstance(opened, dict) or not isinstance(opened.get("data"), bytes):
        return None
    st.info(f"Showing **{escape_markdown(str(opened.get('name')))}** from the fleet.", icon=":material/open_in_new:")
    if st.button("Close it", key="log.close_fleet", help="Go back to the bundled sample or your upload."):
        del st.session_state[OPEN_LOG_KEY]
        st.rerun()
    wanted = opened.get("conversation")
    if wanted is not None and st.session_state.get("log.fleet_conversation_set") != (opened.get("name"), wanted):
        st.session_state[CONVERSATION_KEY] = str(wanted)
        st.session_state["log.fleet_conversation_set"] = (opened.get("name"), wanted)
    return opened


def pick_upload(uploads: list[UploadedFile]) -> UploadedFile | None:
    """The uploaded file to replay: the only one, or the one picked when several were uploaded."""
    if len(uploads) <= 1:
        return uploads[0] if uploads else None
    by_name = {f"{i + 1}. {u.name}": u for i, u in enumerate(uploads)}
    chosen = st.selectbox("Uploaded log to replay", list(by_name), key=UPLOADED_PICK_KEY,
                          help="Several logs are uploaded; the replay uses one at a time.")
    return by_name.get(chosen, uploads[0])


def choose_conversation(conversations: list[Conversation]) -> Conversation:
    """Sidebar: which conversation of a multi-conversation log to replay (the first by default)."""
    if len(conversations) == 1:
        return conversations[0]
    by_id = {c.id: c for c in conversations}
    chosen = st.selectbox(
        "Conversation",
        list(by_id),
        key=CONVERSATION_KEY,
        help="This log holds several conversations (runs, trials or subagents); the replay uses one at a time.",
    )
    return by_id.get(chosen, conversations[0])


def show_log_facts(choice: LogChoice, conversation: Conversation, conversations: int) -> None:
    """Main area: what was read — format, messages, LLM calls, tool calls, results, and the load warnings."""
    info = compaction.formats().get(conversation.format)
    title = info.title if info is not None else conversation.format
    where = {"sample": "bundled sample", "fleet": "log opened from the fleet",
             "local": "session on this machine"}.get(choice.origin, "uploaded file")
    extra = f" · conversation {escape_markdown(conversation.id)} of {conversations}" if conversations > 1 else ""
    st.caption(f"{where}: **{escape_markdown(choice.name)}** · read as {escape_markdown(title)}{extra}")
    summary = conversation.summary()
    warnings = conversation.warnings
    facts = [
        (summary["messages"], "message", "messages"),
        (summary["llm_calls"], "LLM call", "LLM calls"),
        (summary["tool_calls"], "tool call", "tool calls"),
        (summary["tool_results"], "tool result", "tool results"),
        (len(warnings), "warning", "warnings"),
    ]
    line = " · ".join(f"**{n:,}** {one if n == 1 else many}" for n, one, many in facts)
    st.markdown(f":blue-badge[{conversation.format}] {line}",  # format names come from our registry
                help="Messages after normalization (one tool message per tool result, one assistant message per LLM "
                "output). Each assistant message is an LLM call: the replay measures the context right before it. "
                "Warnings are lines or messages skipped or repaired while reading; each costs only itself.")
    notes = []
    tools = conversation.tool_names
    if tools:
        shown = ", ".join(escape_markdown(t) for t in tools[:12]) + (f" and {len(tools) - 12} more" if len(tools) > 12
                                                                     else "")
        notes.append(f"tools seen: {shown}")
    if conversation.usage:
        notes.append(f"the log reports provider usage for {len(conversation.usage):,} calls")
    if conversation.events:
        notes.append(f"the real agent compacted {len(conversation.events):,} times in this log (its own summaries "
                     "are left out of the replay)")
    if notes:
        st.caption("Also: " + "; ".join(notes) + ".")
    if warnings:
        with st.expander(f"Load warnings ({len(warnings):,})", icon=":material/warning:"):
            for w in warnings[:MAX_WARNINGS_SHOWN]:
                where_line = f"line {w.line}: " if w.line is not None else ""
                st.text(f"{where_line}{w.message}")
            if len(warnings) > MAX_WARNINGS_SHOWN:
                st.caption(f"… and {len(warnings) - MAX_WARNINGS_SHOWN:,} more.")
