"""Finding the agent sessions stored on this machine: Claude Code, Codex, Gemini CLI, Cline, Roo Code, OpenCode and
Aider, newest first, with where each lives, its size and when it last changed — and, only when asked, its LLM calls.

Each agent keeps its sessions in a fixed layout under the user's home (``$HOME``, or the agent's own environment
variable such as ``$CODEX_HOME``); Aider keeps its histories in the project folder, so those are looked for under
the folders given as ``roots``. The search is bounded (directory entries, depth below a root, wall time) so a huge
home cannot hang it, never follows a symbolic link to a folder, and follows a link to a file only when the file lies
inside the agent's folder. Unreadable folders are skipped with a note.

    from compaction.discover import discover, count_llm_calls
    sessions = discover()                      # list[FoundSession], newest first
    counted = count_llm_calls(sessions[:5])    # the same, with llm_calls (or count_error) filled
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Any
from typing import NamedTuple
from urllib.parse import quote

from .conversation import Conversation
from .formats import LoadError
from .formats import formats
from .formats import load_all_conversations


# ------------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class FoundSession:
    """One agent session found on disk."""

    #: the agent, which is also the id of the log format that reads it (``claude-code``, ``codex``, …)
    agent: str
    #: the file (or folder) holding the session: what ``python -m compaction info`` takes
    path: str
    #: bytes of the files the session is stored in; None when that is not known (a session inside a database)
    size: int | None
    #: when the session last changed (POSIX seconds)
    modified: float
    #: ``"session"``, or ``"subagent"`` for a subagent's own transcript
    kind: str = "session"
    #: for a subagent: the session that started it, when it was found — its path, or its :attr:`conversation` id
    #: when both live in the same log
    parent: str | None = None
    #: the session's id inside a log holding several sessions (an OpenCode database), else None
    conversation: str | None = None
    #: a short label of where it belongs: the project folder, the editor, …
    where: str = ""
    #: LLM calls in the session (all its conversations), once counted with :func:`count_llm_calls`
    llm_calls: int | None = None
    #: why the session could not be counted (read), when it could not
    count_error: str | None = None

    @property
    def modified_iso(self) -> str:
        """:attr:`modified` as ISO 8601 UTC, to the second (``2026-05-01T12:03:04Z``)."""
        return iso_utc(self.modified)

    def to_json(self) -> dict[str, Any]:
        """The object ``discover --json`` prints: ``path``, ``agent``, ``modified``, ``size`` and the rest;
        ``llm_calls`` (or ``count_error``) only once counted."""
        out: dict[str, Any] = {"path": self.path, "agent": self.agent, "modified": self.modified_iso,
                               "size": self.size, "kind": self.kind}
        if self.parent is not None:
            out["parent"] = self.parent
        if self.conversation is not None:
            out["conversation"] = self.conversation
        if self.where:
            out["where"] = self.where
        if self.llm_calls is not None:
            out["llm_calls"] = self.llm_calls
        if self.count_error is not None:
            out["count_error"] = self.count_error
        return out


@dataclass
class Discovery:
    """What a search found (newest first), and notes on what it could not look at or where it stopped."""

    sessions: list[FoundSession] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def iso_utc(seconds: float) -> str:
    """POSIX seconds as ISO 8601 UTC to the second, with a ``Z``."""
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Limits:
    """Bounds on one search."""

    #: directory entries looked at in all (every agent's folders and every root)
    max_entries: int = 200_000
    #: directory entries looked at under one root (the Aider search), so one huge root cannot starve the others
    max_root_entries: int = 50_000
    #: how many folders below a root the Aider search descends
    max_depth: int = 6
    #: wall time of the whole search, in seconds
    seconds: float = 10.0


DEFAULT_LIMITS = Limits()


# ------------------------------------------------------------------------------------------------- walking
class _File(NamedTuple):
    """A file found: its path, name and stat."""

    path: str
    name: str
    st: os.stat_result


class _Exhausted(Exception):
    """The search reached one of its limits."""


class _Search:
    """The state of one search: where home is, the environment, the limits spent so far, and the notes."""

    def __init__(self, home: Path, env: Mapping[str, str], roots: Sequence[Path], limits: Limits) -> None:
        self.home = home
        self.env = env
        self.roots = roots
        self.limits = limits
        self.notes: list[str] = []
        self.entries = 0
        self.deadline = time.monotonic() + limits.seconds
        self._budget_left: int | None = None  # entries left under the current root, when walking one

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def env_path(self, name: str) -> Path | None:
        """An environment variable naming a folder (``~`` expanded against :attr:`home`), or None when unset."""
        value = (self.env.get(name) or "").strip()
        if not value:
            return None
        if value == "~" or value.startswith("~/"):
            return self.home / value[2:]
        return Path(value)

    def folder(self, path: Path) -> Path | None:
        """The real path of a fixed location (it may itself be a link, e.g. ``~/.claude`` kept in a dotfiles
        repository) when it is a folder, else None."""
        try:
            real = Path(os.path.realpath(path))
            return real if real.is_dir() else None
        except OSError:
            return None

    def entries_of(self, folder: str | Path) -> list[os.DirEntry[str]]:
        """The entries of ``folder`` (none when it is missing or unreadable, with a note when unreadable), counted
        against the limits; :class:`_Exhausted` when a limit is reached."""
        if time.monotonic() > self.deadline:
            raise _Exhausted(f"stopped after {self.limits.seconds:g} s")
        try:
            with os.scandir(folder) as it:
                found = list(it)
        except (FileNotFoundError, NotADirectoryError):
            return []
        except PermissionError:
            self.note(f"{folder}: not readable (permission denied); skipped")
            return []
        except OSError as exc:
            self.note(f"{folder}: not readable ({exc.strerror or exc}); skipped")
            return []
        self.entries += len(found)
        if self.entries > self.limits.max_entries:
            raise _Exhausted(f"stopped after {self.limits.max_entries:,} directory entries")
        if self._budget_left is not None:
            self._budget_left -= len(found)
            if self._budget_left < 0:
                raise _Exhausted(f"stopped after {self.limits.max_root_entries:,} directory entries under one root")
        return found

    def subfolders(self, folder: str | Path) -> list[os.DirEntry[str]]:
        """Folders in ``folder`` that are not links (a link to a folder is never followed: no loops, no escape)."""
        out = []
        for entry in self.entries_of(folder):
            try:
                if entry.is_dir(follow_symlinks=False):
                    out.append(entry)
            except OSError:
                continue
        return out

    def regular_file(self, path: str | os.DirEntry[str], within: Path) -> os.stat_result | None:
        """The stat of a regular file, following a link only when its target lies inside ``within``; else None."""
        try:
            is_link = path.is_symlink() if isinstance(path, os.DirEntry) else os.path.islink(path)
            target = path.path if isinstance(path, os.DirEntry) else path
            if is_link:
                real = os.path.realpath(target)
                if os.path.commonpath([real, str(within)]) != str(within):
                    return None
                target = real
            st = os.stat(target)
        except (OSError, ValueError):
            return None
        return st if stat.S_ISREG(st.st_mode) else None

    def files(self, folder: str | Path, within: Path, accept: Callable[[str], bool]) -> list[_File]:
        """The regular files in ``folder`` whose name ``accept`` takes."""
        out = []
        for entry in self.entries_of(folder):
            if accept(entry.name):
                st = self.regular_file(entry, within)
                if st is not None:
                    out.append(_File(entry.path, entry.name, st))
        return out

    @contextmanager
    def under_root(self) -> Iterator[None]:
        """A context in which the entries looked at also count against :attr:`Limits.max_root_entries`."""
        self._budget_left = self.limits.max_root_entries
        try:
            yield
        finally:
            self._budget_left = None


def _found(agent: str, file: _File, **more: Any) -> FoundSession:
    return FoundSession(agent, file.path, file.st.st_size, file.st.st_mtime, **more)


def _unique_folders(search: _Search, candidates: Iterable[Path | None]) -> list[Path]:
    """The existing folders among ``candidates``, each once (by real path), in order."""
    out: list[Path] = []
    for candidate in candidates:
        if candidate is None:
            continue
        real = search.folder(candidate)
        if real is not None and real not in out:
            out.append(real)
    return out


# ------------------------------------------------------------------------------------------------- agents
def _claude_code(search: _Search) -> Iterator[FoundSession]:
    """``<config>/projects/<project>/<session>.jsonl`` and ``<session>/subagents/agent-*.jsonl`` (Claude Code 2.1);
    older versions' ``agent-*.jsonl`` beside the sessions are subagents too. ``<config>``: ``$CLAUDE_CONFIG_DIR``,
    ``~/.claude`` and ``~/.config/claude``."""
    config = search.env_path("CLAUDE_CONFIG_DIR")
    xdg = search.env_path("XDG_CONFIG_HOME") or search.home / ".config"
    bases = _unique_folders(search, [config / "projects" if config else None, search.home / ".claude" / "projects",
                                     xdg / "claude" / "projects"])
    for base in bases:
        for project in search.subfolders(base):
            for file in search.files(project.path, base, lambda n: n.endswith(".jsonl")):
                kind = "subagent" if file.name.startswith("agent-") else "session"
                yield _found("claude-code", file, kind=kind, where=project.name)
            for session in search.subfolders(project.path):
                subagents = os.path.join(session.path, "subagents")
                if not os.path.isdir(subagents) or os.path.islink(subagents):
                    continue
                parent = os.path.join(project.path, f"{session.name}.jsonl")
                parent_path = parent if search.regular_file(parent, base) else None
                for file in search.files(subagents, base, _named("agent-", ".jsonl")):
                    yield _found("claude-code", file, kind="subagent", parent=parent_path, where=project.name)


def _codex(search: _Search) -> Iterator[FoundSession]:
    """``$CODEX_HOME`` (default ``~/.codex``): ``sessions/YYYY/MM/DD/rollout-*.jsonl`` and
    ``archived_sessions/rollout-*.jsonl``."""
    homes = _unique_folders(search, [search.env_path("CODEX_HOME"), search.home / ".codex"])
    rollout = _named("rollout-", ".jsonl")
    for codex_home in homes:
        sessions = search.folder(codex_home / "sessions")
        if sessions is not None:
            yield from _files_at_depth(search, sessions, sessions, 3, rollout, "codex", "")
        archived = search.folder(codex_home / "archived_sessions")
        if archived is not None:
            for file in search.files(archived, archived, rollout):
                yield _found("codex", file, where="archived")


def _files_at_depth(search: _Search, folder: str | Path, within: Path, depth: int, accept: Callable[[str], bool],
                    agent: str, where: str) -> Iterator[FoundSession]:
    """Accepted files in ``folder`` and in its folders down to ``depth`` levels."""
    for file in search.files(folder, within, accept):
        yield _found(agent, file, where=where)
    if depth > 0:
        for sub in search.subfolders(folder):
            yield from _files_at_depth(search, sub.path, within, depth - 1, accept, agent, where)


def _named(prefix: str, *suffixes: str) -> Callable[[str], bool]:
    return lambda name: name.startswith(prefix) and name.endswith(suffixes)


def _gemini_cli(search: _Search) -> Iterator[FoundSession]:
    """``$GEMINI_CLI_HOME/.gemini`` (default ``~/.gemini``): ``tmp/<project>/chats/session-*.jsonl`` (older:
    ``.json``; when both exist the ``.jsonl`` the newer version migrated to is the one listed) and subagents in
    ``chats/<parent session id>/*.jsonl``."""
    gemini_home = search.env_path("GEMINI_CLI_HOME")
    bases = _unique_folders(search, [gemini_home / ".gemini" / "tmp" if gemini_home else None,
                                     search.home / ".gemini" / "tmp"])
    for base in bases:
        for project in search.subfolders(base):
            chats = Path(project.path) / "chats"
            if os.path.islink(chats) or not os.path.isdir(chats):
                continue
            mains = search.files(chats, base, _named("session-", ".json", ".jsonl"))
            names = {f.name for f in mains}
            for file in mains:
                if file.name.endswith(".json") and file.name + "l" in names:
                    continue
                yield _found("gemini-cli", file, where=project.name)
            for sub in search.subfolders(chats):
                parent = _gemini_parent(sub.name, mains)
                for file in search.files(sub.path, base, lambda n: n.endswith(".jsonl")):
                    yield _found("gemini-cli", file, kind="subagent", parent=parent, where=project.name)


def _gemini_parent(parent_id: str, mains: list[_File]) -> str | None:
    """The main session file of a subagent folder: Gemini CLI names it ``session-<time>-<first 8 of the id>``."""
    short = f"-{parent_id[:8]}"
    matches = sorted((f.path for f in mains if f.name.rsplit(".", 1)[0].endswith(short)),
                     key=lambda p: not p.endswith("l"))
    return matches[0] if matches else None


#: VS Code extension ids (lowercase, as VS Code names their storage folders) of the Cline family
EXTENSIONS = {"saoudrizwan.claude-dev": "cline", "rooveterinaryinc.roo-cline": "roo-code"}
#: per-user folders of editors' remote servers (VS Code Remote, Cursor, Windsurf…) and Codespaces
_REMOTE_SERVER = ("-server", "-server-insiders", "-remote")


def _editor_storages(search: _Search) -> Iterator[tuple[str, Path]]:
    """(editor, ``User/globalStorage`` folder) of every VS Code-like editor: each ``<App>/User/globalStorage``
    under the Linux (``$XDG_CONFIG_HOME``, ``~/.config``), macOS (``~/Library/Application Support``) and Windows
    (``%APPDATA%``) configuration folders and Flatpak apps, and ``~/.<editor>-server/data/User/globalStorage``."""
    home = search.home
    configs = _unique_folders(search, [search.env_path("XDG_CONFIG_HOME"), home / ".config",
                                       home / "Library" / "Application Support", search.env_path("APPDATA"),
                                       home / "AppData" / "Roaming"])
    flatpak = search.folder(home / ".var" / "app")
    if flatpak is not None:
        configs += _unique_folders(search, [Path(app.path) / "config" for app in search.subfolders(flatpak)])
    seen: set[Path] = set()
    for config in configs:
        for app in search.subfolders(config):
            storage = Path(app.path) / "User" / "globalStorage"
            if storage not in seen and os.path.isdir(storage) and not os.path.islink(storage):
                seen.add(storage)
                yield app.name, storage
    for entry in search.subfolders(home):
        if entry.name.startswith(".") and entry.name.endswith(_REMOTE_SERVER):
            storage = Path(entry.path) / "data" / "User" / "globalStorage"
            if storage not in seen and os.path.isdir(storage) and not os.path.islink(storage):
                seen.add(storage)
                yield entry.name.lstrip("."), storage


def _cline_family(search: _Search) -> Iterator[FoundSession]:
    """Task folders ``tasks/<id>/`` holding ``api_conversation_history.json``, in each editor's global storage of
    the Cline (``saoudrizwan.claude-dev``) and Roo Code (``RooVeterinaryInc.roo-cline``) extensions, and in the Cline
    CLI's data folder (``$CLINE_DATA_DIR``, ``$CLINE_DIR/data``, ``~/.cline/data``)."""
    places: list[tuple[str, str, Path]] = []
    for editor, storage in _editor_storages(search):
        for entry in search.subfolders(storage):
            agent = EXTENSIONS.get(entry.name.lower())
            if agent is not None:
                places.append((agent, editor, Path(entry.path)))
    cline_dir = search.env_path("CLINE_DIR")
    for data in _unique_folders(search, [search.env_path("CLINE_DATA_DIR"), cline_dir / "data" if cline_dir else None,
                                         search.home / ".cline" / "data"]):
        places.append(("cline", "Cline CLI", data))
    for agent, editor, storage in places:
        tasks = search.folder(storage / "tasks")
        if tasks is None:
            continue
        for task in search.subfolders(tasks):
            found = _task_folder(search, task.path, tasks, agent, editor)
            if found is not None:
                yield found


def _task_folder(search: _Search, folder: str, within: Path, agent: str, editor: str) -> FoundSession | None:
    """A Cline / Roo task folder as a session: its files' total size and latest change; None without a history."""
    files = search.files(folder, within, lambda n: True)
    if not any(f.name == "api_conversation_history.json" for f in files):
        return None
    return FoundSession(agent, folder, sum(f.st.st_size for f in files), max(f.st.st_mtime for f in files),
                        where=editor)


#: the most bytes of an OpenCode session-info file read to find its parent session
_SESSION_INFO_LIMIT = 1 << 20


def _opencode(search: _Search) -> Iterator[FoundSession]:
    """``$XDG_DATA_HOME/opencode`` (default ``~/.local/share/opencode``): the JSON storage's sessions
    (``storage/session/<project>/<id>.json``, their messages in ``storage/message/<id>/`` and parts in
    ``storage/part/<message id>/``), and, when the ``opencode`` reader reads databases, the sessions of
    ``opencode.db`` (OpenCode ≥ 1.2). Each is found as its log (the storage folder, or the database) plus its
    session id as :attr:`FoundSession.conversation`."""
    data_home = search.env_path("XDG_DATA_HOME") or search.home / ".local" / "share"
    for data in _unique_folders(search, [data_home / "opencode", search.home / ".local" / "share" / "opencode"]):
        storage = search.folder(data / "storage")
        if storage is not None:
            yield from _opencode_storage(search, storage)
        if _reads_databases("opencode"):
            for file in search.files(data, data, _named("opencode", ".db")):
                yield from _opencode_database(search, file)


def _opencode_storage(search: _Search, storage: Path) -> Iterator[FoundSession]:
    """The sessions of OpenCode's JSON storage, each sized and dated by its info, message and part files."""
    sessions = search.folder(storage / "session")
    if sessions is None:
        return
    messages, parts = str(storage / "message"), str(storage / "part")

    def is_json(name: str) -> bool:
        return name.endswith(".json")

    for project in search.subfolders(sessions):
        for info in search.files(project.path, storage, is_json):
            session_id = info.name[:-len(".json")]
            size, modified = info.st.st_size, info.st.st_mtime
            for message in search.files(os.path.join(messages, session_id), storage, is_json):
                size, modified = size + message.st.st_size, max(modified, message.st.st_mtime)
                for part in search.files(os.path.join(parts, message.name[:-len(".json")]), storage, is_json):
                    size, modified = size + part.st.st_size, max(modified, part.st.st_mtime)
            parent_id = _opencode_parent(info)
            yield FoundSession("opencode", str(storage), size, modified, kind="subagent" if parent_id else "session",
                               parent=parent_id, conversation=session_id, where=project.name)


def _opencode_parent(info: _File) -> str | None:
    """The ``parentID`` an OpenCode session-info file names (a subagent's), or None."""
    import json

    if info.st.st_size > _SESSION_INFO_LIMIT:
        return None
    try:
        with open(info.path, "rb") as fh:
            info = json.loads(fh.read(_SESSION_INFO_LIMIT))
    except (OSError, ValueError, RecursionError):
        return None
    parent = info.get("parentID") if isinstance(info, dict) else None
    return parent if isinstance(parent, str) and parent else None


def _reads_databases(format_name: str) -> bool:
    """Whether the reader of ``format_name`` takes database files (it lists ``.db`` among its extensions)."""
    info = formats().get(format_name)
    return info is not None and ".db" in info.extensions


_READ_ONLY = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION})


def _only_reads(action: int, *_: Any) -> int:
    return sqlite3.SQLITE_OK if action in _READ_ONLY else sqlite3.SQLITE_DENY


def _opencode_database(search: _Search, database: _File) -> Iterator[FoundSession]:
    """The sessions of an OpenCode SQLite database (its ``session`` table), read-only; their size is what their
    messages and parts hold, when that can be summed before the search's deadline."""
    sizes: dict[str, int] | None
    path, rows, sizes = database.path, [], {}
    try:
        conn = _open_read_only(path)
    except sqlite3.Error as exc:
        search.note(f"{path}: not readable as a database ({exc}); skipped")
        return
    try:
        conn.set_progress_handler(lambda: int(time.monotonic() > search.deadline), 10_000)
        rows = conn.execute("SELECT id, parent_id, time_updated, directory FROM session").fetchall()
        try:
            for table in ("message", "part"):
                for session_id, total in conn.execute(
                        f"SELECT session_id, SUM(LENGTH(data)) FROM {table} GROUP BY session_id"):
                    sizes[session_id] = sizes.get(session_id, 0) + int(total or 0)
        except sqlite3.Error:
            sizes = None  # sizes unknown; the sessions are still listed
    except sqlite3.Error as exc:
        search.note(f"{path}: its sessions could not be listed ({exc}); skipped")
        return
    finally:
        conn.close()
    for session_id, parent_id, updated, directory in rows:
        if not isinstance(session_id, str):
            continue
        modified = updated / 1000 if isinstance(updated, (int, float)) and updated > 0 else database.st.st_mtime
        parent = parent_id if isinstance(parent_id, str) and parent_id else None
        yield FoundSession("opencode", path, sizes.get(session_id, 0) if sizes is not None else None, modified,
                           kind="subagent" if parent else "session", parent=parent, conversation=session_id,
                           where=Path(directory).name if isinstance(directory, str) else "")


def _open_read_only(path: str) -> sqlite3.Connection:
    """A connection that can only read ``path`` (nothing stored in the file may run); an immutable open when a
    read-only one is refused (a WAL database in a folder we may not write)."""
    uri = f"file:{quote(os.path.abspath(path))}"
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.Error:
        conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True)
    conn.execute("PRAGMA trusted_schema = OFF")
    conn.execute("PRAGMA query_only = ON")
    conn.set_authorizer(_only_reads)
    return conn


#: the files Aider writes in the folder it runs in
AIDER_FILES = frozenset({".aider.chat.history.md", ".aider.llm.history"})
#: folders the Aider search never enters (besides every hidden folder): dependencies, caches and build output
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "site-packages", "dist-packages", "venv", "env",
                             "target", "build", "dist", "Library", "AppData"})


def _aider(search: _Search) -> Iterator[FoundSession]:
    """``.aider.chat.history.md`` and ``.aider.llm.history`` in each root and its folders, down to
    :attr:`Limits.max_depth` levels, skipping hidden folders (``.git``, ``.venv``…), ``node_modules`` and the
    like."""
    for given in search.roots:
        if search.folder(given) is None:
            search.note(f"{given}: not a folder; not searched for Aider histories")
    for root in _unique_folders(search, search.roots):
        with search.under_root():
            try:
                yield from _aider_under(search, root, root, search.limits.max_depth)
            except _Exhausted as exc:
                search.note(f"{root}: Aider search {exc}; folders deeper in it were not searched")


def _aider_under(search: _Search, folder: str | Path, root: Path, depth: int) -> Iterator[FoundSession]:
    entries = search.entries_of(folder)
    for entry in entries:
        if entry.name in AIDER_FILES:
            st = search.regular_file(entry, root)
            if st is not None:
                yield _found("aider", _File(entry.path, entry.name, st), where=os.path.basename(folder))
    if depth <= 0:
        return
    for entry in entries:
        name = entry.name
        if name.startswith(".") or name in SKIPPED_FOLDERS:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        yield from _aider_under(search, entry.path, root, depth - 1)


@dataclass(frozen=True)
class AgentLayout:
    """Where one agent keeps its sessions, and how to find them."""

    agent: str
    title: str
    #: for ``docs/formats.md`` and ``discover --help``: where its sessions are looked for
    where: str
    find: Callable[[_Search], Iterator[FoundSession]]


_CLINE_WHERE = ("task folders `tasks/<id>/` (with `api_conversation_history.json`) in the editors' global storage "
                "`<config>/<App>/User/globalStorage/{ext}/` — `<config>` being `~/.config` (or `$XDG_CONFIG_HOME`) "
                "on Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on Windows, for every VS Code-like "
                "App (Code, Code - Insiders, Cursor, Windsurf, VSCodium…), Flatpak apps and remote servers "
                "(`~/.vscode-server/data/User/globalStorage/…`)")

#: every agent ``discover`` looks for, by the id of the format that reads its sessions
AGENTS: dict[str, AgentLayout] = {layout.agent: layout for layout in (
    AgentLayout("claude-code", "Claude Code", "`~/.claude/projects/<project>/<session>.jsonl` (also under "
                "`$CLAUDE_CONFIG_DIR` and `~/.config/claude`), and subagents in `<session>/subagents/agent-*.jsonl`",
                _claude_code),
    AgentLayout("codex", "Codex CLI", "`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` and "
                "`~/.codex/archived_sessions/rollout-*.jsonl` (or under `$CODEX_HOME`)", _codex),
    AgentLayout("gemini-cli", "Gemini CLI", "`~/.gemini/tmp/<project>/chats/session-*.jsonl` (older `.json`; or "
                "under `$GEMINI_CLI_HOME/.gemini`), and subagents in `chats/<parent session id>/*.jsonl`",
                _gemini_cli),
    AgentLayout("cline", "Cline", _CLINE_WHERE.format(ext="saoudrizwan.claude-dev") + "; and the Cline CLI's "
                "`~/.cline/data/tasks/<id>/` (or `$CLINE_DATA_DIR`, `$CLINE_DIR/data`)", _cline_family),
    AgentLayout("roo-code", "Roo Code", _CLINE_WHERE.format(ext="rooveterinaryinc.roo-cline") + " (a custom "
                "storage path set in Roo's settings is not looked in)", _cline_family),
    AgentLayout("opencode", "OpenCode", "the sessions of the storage folder `~/.local/share/opencode/storage/` (or "
                "`$XDG_DATA_HOME/opencode/storage/`: `session/<project>/<id>.json`, with messages and parts), and "
                "those of `opencode.db` (OpenCode ≥ 1.2) when the reader takes databases", _opencode),
    AgentLayout("aider", "Aider", "`.aider.chat.history.md` and `.aider.llm.history` under the folders given with "
                "`--root` (the current folder by default), to a bounded depth, skipping hidden folders, "
                "`node_modules` and the like", _aider),
)}


# ------------------------------------------------------------------------------------------------- searching
def default_home(env: Mapping[str, str] | None = None) -> Path:
    """The user's home: ``$HOME`` (``%USERPROFILE%`` on Windows), else what Python finds."""
    env = os.environ if env is None else env
    value = env.get("HOME") or env.get("USERPROFILE")
    return Path(value) if value else Path.home()


def search(home: str | Path | None = None, roots: Iterable[str | Path] = (), agents: Iterable[str] | None = None,
           *, env: Mapping[str, str] | None = None, limits: Limits = DEFAULT_LIMITS) -> Discovery:
    """Every session of ``agents`` (all by default) under ``home`` (default :func:`default_home`) and, for Aider,
    ``roots``, newest first, with notes on folders that could not be read and on limits reached. ``env`` (default
    ``os.environ``) supplies the agents' own location variables (``CODEX_HOME``, ``XDG_CONFIG_HOME``, …).
    ``ValueError`` for an unknown agent."""
    env = os.environ if env is None else env
    wanted = list(AGENTS) if agents is None else list(dict.fromkeys(agents))
    unknown = [a for a in wanted if a not in AGENTS]
    if unknown:
        raise ValueError(f"unknown agent {unknown[0]!r}; known agents: {', '.join(AGENTS)}")
    state = _Search(Path(home) if home is not None else default_home(env), env, [Path(r) for r in roots], limits)
    found: list[FoundSession] = []
    layouts: dict[Callable[..., Any], AgentLayout] = {}
    for agent in wanted:  # one search per layout: Cline and Roo Code share theirs
        layouts.setdefault(AGENTS[agent].find, AGENTS[agent])
    for find, layout in layouts.items():
        state.entries = 0  # each layout has the whole entry budget; the deadline is shared
        try:
            for session in find(state):
                if session.agent in wanted:
                    found.append(session)
        except _Exhausted as exc:
            state.note(f"{layout.title} search {exc}; its list may be incomplete")
            if time.monotonic() > state.deadline:
                break
    unique = {(s.agent, s.path, s.conversation): s for s in found}
    sessions = sorted(unique.values(), key=lambda s: (-s.modified, s.path, s.conversation or ""))
    return Discovery(sessions, state.notes)


def discover(home: str | Path | None = None, roots: Iterable[str | Path] = (), agents: Iterable[str] | None = None,
             *, env: Mapping[str, str] | None = None, limits: Limits = DEFAULT_LIMITS) -> list[FoundSession]:
    """The sessions :func:`search` finds, newest first (its notes dropped)."""
    return search(home, roots, agents, env=env, limits=limits).sessions


# ------------------------------------------------------------------------------------------------- loading
def load_session(session: FoundSession, cache: dict[str, list[Conversation]] | None = None) -> list[Conversation]:
    """The conversations of a found session, read like any log given by path (``LoadError`` when it cannot be
    read); for a session inside a log of several (OpenCode's storage or database), only that session's. ``cache``
    keeps each log read, for sessions that share one."""
    if cache is not None and session.path in cache:
        conversations = cache[session.path]
    else:
        conversations = load_all_conversations(session.path, format=format_of(session))
        if cache is not None:
            cache[session.path] = conversations
    if session.conversation is None:
        return conversations
    chosen = matching_conversations(conversations, session.conversation)
    if not chosen:
        ids = ", ".join(c.id for c in conversations[:10]) + (", …" if len(conversations) > 10 else "")
        raise LoadError(session.path, f"no conversation {session.conversation!r} in this log; its conversations "
                        f"are: {ids}")
    return chosen


def matching_conversations(conversations: Sequence[Conversation], session_id: str) -> list[Conversation]:
    """The conversations of a shared log that are the session ``session_id``: the one with that id, else those
    whose id contains it (a reader may prefix ids, e.g. with the file name)."""
    exact = [c for c in conversations if c.id == session_id]
    return exact or [c for c in conversations if session_id in c.id]


def format_of(session: FoundSession) -> str | None:
    """The format to read the session with: its agent's, when that reader is registered (else detection decides,
    and names what it tried)."""
    return session.agent if session.agent in formats() else None


def count_llm_calls(sessions: Iterable[FoundSession]) -> list[FoundSession]:
    """The sessions with :attr:`FoundSession.llm_calls` filled (the LLM calls of all their conversations), or
    :attr:`FoundSession.count_error` saying why one could not be read. A log holding several sessions is read
    once."""
    out = []
    shared: dict[str, list[Conversation]] = {}
    for session in sessions:
        try:
            cache = shared if session.conversation is not None else None
            calls = sum(len(c.llm_call_indices) for c in load_session(session, cache))
        except LoadError as exc:
            out.append(replace(session, llm_calls=None, count_error=exc.reason))
            continue
        out.append(replace(session, llm_calls=calls, count_error=None))
    return out


def agent_title(agent: str) -> str:
    """The display name of an agent id (``claude-code`` → ``Claude Code``)."""
    layout = AGENTS.get(agent)
    return layout.title if layout is not None else agent


def human_size(size: int | None) -> str:
    """Bytes for people: ``812 B``, ``14.2 kB``, ``3.1 MB``, ``1.4 GB``; ``?`` when unknown."""
    if size is None:
        return "?"
    if size < 1000:
        return f"{size} B"
    value, unit = size / 1000, "kB"
    for bigger in ("MB", "GB"):
        if value < 1000:
            break
        value, unit = value / 1000, bigger
    return f"{value:.1f} {unit}"
