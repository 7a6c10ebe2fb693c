"""Format registry, the typed load error, and the JSON / JSONL document reader every format shares."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..conversation import Conversation, LoadWarning
from ..errors import LoadError
from ..registry import Registry


@dataclass
class Document:
    """A parsed log file: one JSON value, JSONL records with the lines that failed to parse, plain text (a
    Markdown transcript, say), or the raw bytes of a zip archive or an SQLite database."""

    path: str | None
    kind: str  # "json" | "jsonl" | "text" | "zip" | "sqlite"
    value: Any = None  # for json
    records: list[tuple[int, Any]] = field(default_factory=list)  # for jsonl: (line number, value)
    bad_lines: list[LoadWarning] = field(default_factory=list)
    raw: bytes | None = None  # kept only for binary formats (zip, sqlite)
    text: str | None = None  # for text: the decoded file
    #: files that came with this one (several uploads at once), by file name; see :meth:`companion`
    companions: dict[str, bytes] = field(default_factory=dict, repr=False)
    #: the folder the log lies in on this machine, when it was read from disk (never for an upload: its name is the
    #: uploader's, not a path of this machine); companions may be read from it
    folder: Path | None = None

    def companion(self, name: str) -> bytes | None:
        """A file that belongs with this log (e.g. Cline's ``ui_messages.json`` beside its
        ``api_conversation_history.json``): one given with it, else the file of that name in :attr:`folder`, else
        None. Only a regular file within :data:`COMPANION_LIMIT` bytes is read, and only a plain name is looked up."""
        if name in self.companions:
            return self.companions[name]
        if self.folder is None or Path(name).name != name or name in ("", ".", ".."):
            return None
        candidate = self.folder / name
        try:
            if not candidate.is_file() or candidate.stat().st_size > COMPANION_LIMIT:
                return None
            return candidate.read_bytes()
        except OSError:
            return None


#: the largest companion file a reader may pull in beside the log itself
COMPANION_LIMIT = 256 << 20


@dataclass(frozen=True)
class FormatInfo:
    """A log format: how to recognise it, read it and (optionally) write it."""

    name: str
    title: str
    #: returns None when the document fits, else a short reason why not
    detect: Callable[[Document], str | None]
    read: Callable[[Document], list[Conversation]]
    write: Callable[[Conversation], Any] | None = None
    extensions: tuple[str, ...] = (".json",)
    description: str = ""
    #: for formats kept as a folder of files (a Cline task folder): the folder's conversations, or None when the
    #: folder is not one of this format's
    read_folder: Callable[[Path], list[Conversation] | None] | None = None
    #: for formats whose runs span several files (a Claude Code session and its subagent files): given the
    #: conversations of each file of one load (folder or several paths), in file order, returns them with the
    #: cross-file links filled in (``Source.parent`` / ``parent_call_id``; a parent in another file is named by its
    #: id and ``Source.meta["parent_path"]``) and duplicates left out
    combine: Callable[[list[list[Conversation]]], list[list[Conversation]]] | None = None
    #: for ``docs/formats.md``: what of the log is read, and what is left out and why
    reads: str = ""
    leaves_out: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "extensions": list(self.extensions),
            "writable": self.write is not None,
            "description": self.description,
            "reads": self.reads,
            "leaves_out": self.leaves_out,
        }


def _import_readers() -> None:
    from . import load_all

    load_all()


def register_format(info: FormatInfo) -> FormatInfo:
    """Add a log format to the registry (names are unique ids, e.g. ``claude-code``)."""
    return FORMATS.register(info.name, info)


def formats() -> dict[str, FormatInfo]:
    """All registered formats, in detection order (:data:`DETECTION_ORDER`)."""
    return FORMATS.all()


def detection_rank(name: str) -> tuple[float, str]:
    """Where format ``name`` is tried: its place in :data:`DETECTION_ORDER`; a format not listed there (one added
    by a plugin or a new module) right before the plain message lists, unlisted ones by name."""
    if name in _RANK:
        return _RANK[name], ""
    return _RANK[PLAIN_LISTS[0]] - 0.5, name


#: The order formats are tried in when a log's format is not given: the first whose detector accepts it reads it.
#: Formats with distinctive keys or records come first, shapes that others share later, and the plain message lists
#: (Haystack, OpenAI chat) last, since many richer formats also hold such a list. Every registered format is listed
#: here exactly once (``tests/test_formats_registry.py``); a new format takes its place by what it must be tried
#: before (a Cline history is an Anthropic message list with tool results as text, so ``cline`` precedes ``anthropic``).
#: the plain message lists, tried last: a format not listed in DETECTION_ORDER is tried right before them
PLAIN_LISTS: tuple[str, ...] = ("agent-framework", "haystack", "openai")
DETECTION_ORDER: tuple[str, ...] = (
    # JSONL records with distinctive fields
    "claude-code", "codex", "gemini-cli",
    # objects with distinctive keys
    "inspect-ai", "langchain", "mini-swe-agent", "swe-agent", "tau-bench", "tau2-bench", "pydantic-ai",
    "google-adk", "openai-agents", "opencode", "otel-genai",
    # text transcripts
    "aider",
    # Anthropic message lists and their refinements
    "cline", "roo-code", "anthropic",
    # event streams and item lists
    "openhands", "openai-responses",
    # plain message lists
    *PLAIN_LISTS,
)
_RANK = {name: i for i, name in enumerate(DETECTION_ORDER)}
#: every registered log format, in detection order (importing the readers registers them)
FORMATS: Registry[FormatInfo] = Registry("format", _import_readers, order=detection_rank)


#: the first 16 bytes of every SQLite 3 database file (an OpenAI Agents SDK ``SQLiteSession``, say)
SQLITE_MAGIC = b"SQLite format 3\x00"


def parse_document(data: bytes, path: str | None = None) -> Document:
    """Decode bytes as UTF-8 JSON, or as JSONL where each bad line (invalid JSON or invalid UTF-8) is reported and
    skipped. JSONL is parsed line by line straight from the bytes, so a large log is never held as a second text copy.
    """
    if data[:4] == b"PK\x03\x04":
        return Document(path, "zip", raw=data)
    if data[:16] == SQLITE_MAGIC:
        return Document(path, "sqlite", raw=data)
    if _blank(data):
        raise LoadError(path, "the file is empty; expected a JSON or JSONL agent log")
    if b"\x00" in data[:4096]:
        raise LoadError(path, "this looks like a binary file; expected a JSON or JSONL agent log (UTF-8 text)")
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    if _starts_like_jsonl(body):
        return _jsonl_document(body, path, None)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = body[: exc.start].count(b"\n") + 1
        raise LoadError(path, f"not UTF-8 text (byte 0x{body[exc.start]:02x} at offset {exc.start})", line=line) from None
    try:
        return Document(path, "json", value=json.loads(text))
    except RecursionError:
        raise LoadError(path, "JSON nested too deeply to be an agent log") from None
    except json.JSONDecodeError as whole_error:
        del text
        return _jsonl_document(body, path, whole_error)
    except ValueError as exc:  # e.g. an integer literal past Python's digit limit
        raise LoadError(path, f"not a usable JSON document ({exc})") from None


#: a byte that ``bytes.strip()`` keeps (not ASCII whitespace)
_NOT_BLANK = re.compile(rb"[^ \t\n\r\x0b\x0c]")


def _blank(data: bytes, start: int = 0) -> bool:
    """``not data[start:].strip()``, without copying the bytes (the search stops at the first visible byte)."""
    return _NOT_BLANK.search(data, start) is None


def _starts_like_jsonl(body: bytes) -> bool:
    """The first line is a whole JSON object and more lines follow: JSONL (cheap: only the first line is parsed)."""
    end = body.find(b"\n")
    if end < 0 or _blank(body, end + 1):
        return False
    first = body[:end].strip()
    if not first.startswith(b"{"):
        return False
    try:
        return isinstance(json.loads(first), dict)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors too
        return False


def _jsonl_document(body: bytes, path: str | None, whole_error: json.JSONDecodeError | None) -> Document:
    # text that merely has a few lines that parse as JSON (a number, a quoted string, an object in a Markdown
    # transcript) is still text: JSONL starts with a record and is mostly records (judged on the first lines
    # first, so a long text is not parsed line by line)
    starts_as_text = body.lstrip()[:1] not in (b"{", b"[")
    if starts_as_text and _mostly_not_records(*_parse_lines(body[:_TEXT_SAMPLE])):
        text = _text_or_none(body)
        if text is not None:
            return Document(path, "text", text=text)
    records, bad = _parse_lines(body)
    if starts_as_text and _mostly_not_records(records, bad):
        text = _text_or_none(body)
        if text is not None:
            return Document(path, "text", text=text)
    if not records:
        reason = f"not valid JSON ({whole_error.msg})" if whole_error else "no valid JSON line"
        raise LoadError(path, f"{reason} and no line parses as JSONL",
                        line=whole_error.lineno if whole_error else None)
    if whole_error is not None and len(records) == 1 and not bad:
        raise LoadError(path, f"not valid JSON: {whole_error.msg}", line=whole_error.lineno)
    return Document(path, "jsonl", records=records, bad_lines=bad)


#: how much of a document that does not start like JSON is parsed line by line to tell text from damaged JSONL
_TEXT_SAMPLE = 64 << 10


def _mostly_not_records(records: list, bad: list) -> bool:
    return len(records) < len(bad)


def _text_or_none(body: bytes) -> str | None:
    """``body`` as UTF-8 text, or None when it is not."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _parse_lines(body: bytes) -> tuple[list[tuple[int, Any]], list[LoadWarning]]:
    """(line number, value) of every JSON line, and a warning per line that is not valid UTF-8 JSON."""
    records: list[tuple[int, Any]] = []
    bad: list[LoadWarning] = []
    start, number, size = 0, 0, len(body)
    while start < size:
        end = body.find(b"\n", start)
        if end < 0:
            end = size
        number += 1
        line = body[start:end]
        start = end + 1
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except UnicodeDecodeError as exc:
            bad.append(LoadWarning(f"skipped: not UTF-8 text (byte 0x{line[exc.start]:02x} at column {exc.start + 1})",
                                   line=number))
        except (ValueError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else (
                "nested too deeply" if isinstance(exc, RecursionError) else str(exc))
            bad.append(LoadWarning(f"skipped: not valid JSON ({reason})", line=number))
    return records, bad


def iter_records(doc: Document) -> Iterator[tuple[int | None, Any]]:
    """(line, value) pairs: JSONL records, or the elements of a top-level JSON list."""
    if doc.kind == "jsonl":
        yield from doc.records
    elif isinstance(doc.value, list):
        for item in doc.value:
            yield None, item
    else:
        yield None, doc.value


def read_document(path: str | Path) -> Document:
    """The file at ``path`` parsed as a :class:`Document` that may read its companions from its folder."""
    doc = parse_document(read_path(path), str(path))
    doc.folder = Path(path).parent
    return doc


def read_path(path: str | Path) -> bytes:
    """Read a file, turning OS errors into a :class:`LoadError`."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise LoadError(str(path), f"cannot read the file ({exc.strerror or exc})") from None
