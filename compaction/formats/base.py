"""Format registry, the typed load error, and the JSON / JSONL document reader every format shares.

Reading bytes is bounded and forgiving, because logs come from strangers: :func:`read_path` reads regular files
only (a FIFO, a device or a directory is refused at once, without blocking) of at most :data:`MAX_FILE_BYTES`;
:func:`parse_document` recognises gzip (and zstd, when the ``zstandard`` module is installed) by their magic bytes
and decompresses them as a stream that stops at :data:`MAX_DECOMPRESSED_BYTES`, decodes UTF-16 and UTF-32 text
(with a byte-order mark, or UTF-16 recognised by its zero bytes), and lets a damaged line cost only itself —
the first line included (garbage, blank, truncated, not UTF-8, zero bytes).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
import zlib
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from ..conversation import Conversation
from ..conversation import LoadWarning
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


#: the largest log file :func:`read_path` reads
MAX_FILE_BYTES = 2 << 30
#: the most bytes a compressed log may decompress to (the decompression stops there: a bomb costs one message)
MAX_DECOMPRESSED_BYTES = 256 << 20
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: byte-order marks of the UTF-16 and UTF-32 encodings decoded (the UTF-32 ones first: they begin like UTF-16's)
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32", "UTF-32"), (b"\x00\x00\xfe\xff", "utf-32", "UTF-32"),
         (b"\xff\xfe", "utf-16", "UTF-16"), (b"\xfe\xff", "utf-16", "UTF-16"))
_CHUNK = 1 << 20


def compressed_suffixes() -> tuple[str, ...]:
    """File name endings of the compressed logs that can be read here (``.zst`` only with ``zstandard``)."""
    return (".gz", ".zst") if importlib.util.find_spec("zstandard") is not None else (".gz",)


def parse_document(data: bytes, path: str | None = None) -> Document:
    """Decode bytes as UTF-8 JSON, or as JSONL where each bad line (invalid JSON or invalid UTF-8) is reported and
    skipped. JSONL is parsed line by line straight from the bytes, so a large log is never held as a second text copy.
    gzip / zstd data is decompressed first and UTF-16 / UTF-32 text decoded (see the module docstring).
    """
    notes: list[LoadWarning] = []
    body = _decompressed(data, path, notes)
    if body[:4] == b"PK\x03\x04":
        return Document(path, "zip", raw=bytes(body), bad_lines=notes)
    if body[:16] == SQLITE_MAGIC:
        return Document(path, "sqlite", raw=bytes(body), bad_lines=notes)
    text, encoding_problem = _as_utf8(body, path)
    try:
        doc = _parse_text(text, path)
    except LoadError:
        if encoding_problem is not None:  # it looked like UTF-16 / UTF-32: say so rather than "binary"
            raise encoding_problem from None
        raise
    doc.bad_lines[:0] = notes
    return doc


def _parse_text(data: bytes | bytearray, path: str | None) -> Document:
    if _blank(data):
        raise LoadError(path, "the file is empty; expected a JSON or JSONL agent log")
    if b"\x00" in data[:4096] and not _damage_confined_to_first_line(data):
        raise LoadError(path, "this looks like a binary file; expected a JSON or JSONL agent log (UTF-8 text)")
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    if _starts_like_jsonl(body):
        return _jsonl_document(body, path, None)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        records, bad = _parse_lines(body)
        if len(records) > len(bad):  # JSONL with some lines damaged (the first, say): each costs only itself
            return Document(path, "jsonl", records=records, bad_lines=bad)
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


def _damage_confined_to_first_line(data: bytes | bytearray) -> bool:
    """Zero bytes only in a damaged first line: the next 4 KB are text with a JSON object line in them."""
    end = data.find(b"\n", 0, _CHUNK)
    if end < 0:
        return False
    following = data[end + 1:end + 1 + 4096]
    return b"\x00" not in following and any(line.strip().startswith(b"{") for line in following.split(b"\n"))


# ---------------------------------------------------------------------------------------- compression, encodings
def _decompressed(data: bytes, path: str | None, notes: list[LoadWarning]) -> bytes | bytearray:
    """``data`` decompressed when it starts with gzip or zstd magic bytes (once: a compressed file inside is not
    opened again), at most :data:`MAX_DECOMPRESSED_BYTES`."""
    if data[:2] == GZIP_MAGIC:
        return _gunzip(data, path, notes)
    if data[:4] == ZSTD_MAGIC:
        return _unzstd(data, path, notes)
    return data


def _too_large(path: str | None, kind: str) -> LoadError:
    return LoadError(path, f"this {kind} log decompresses to more than {MAX_DECOMPRESSED_BYTES:,} bytes, the most "
                     "read (a limit against decompression bombs); decompress it yourself to read it")


def _gunzip(data: bytes, path: str | None, notes: list[LoadWarning]) -> bytearray:
    """Every gzip member of ``data``, decompressed as a stream with an output cap. A stream that ends early keeps
    what it held (a log still being written), with a warning; damaged data is a :class:`LoadError`."""
    out = bytearray()
    position = 0
    while position < len(data):
        inflater = zlib.decompressobj(wbits=31)
        try:
            while position < len(data) and not inflater.eof:
                piece = data[position:position + _CHUNK]
                position += len(piece)
                chunk = inflater.decompress(piece, _CHUNK)  # never more than a chunk of output at a time
                while True:
                    out += chunk
                    if len(out) > MAX_DECOMPRESSED_BYTES:
                        raise _too_large(path, "gzip")
                    if not inflater.unconsumed_tail:
                        break
                    chunk = inflater.decompress(inflater.unconsumed_tail, _CHUNK)
        except zlib.error as exc:
            raise LoadError(path, f"damaged gzip data ({exc})") from None
        if not inflater.eof:
            notes.append(LoadWarning("the gzip data ends early (a truncated file); read what it holds"))
            break
        rest = inflater.unused_data
        position -= len(rest)
        if rest[:2] != GZIP_MAGIC:
            if rest.strip(b"\x00"):
                notes.append(LoadWarning(f"{len(data) - position:,} bytes after the gzip data were ignored"))
            break
    return out  # a bytearray (bytes-like): no second copy of up to MAX_DECOMPRESSED_BYTES


def _unzstd(data: bytes, path: str | None, notes: list[LoadWarning]) -> bytearray:
    """zstd frames decompressed as a stream with an output cap (only when the ``zstandard`` module is installed)."""
    try:
        import zstandard
    except ImportError:
        raise LoadError(path, "this log is zstd-compressed; reading it needs the zstandard package (pip install "
                        "zstandard), or decompress it first") from None
    out = bytearray()
    try:
        with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as reader:
            while True:
                chunk = reader.read(_CHUNK)
                if not chunk:
                    break
                out += chunk
                if len(out) > MAX_DECOMPRESSED_BYTES:
                    raise _too_large(path, "zstd")
    except zstandard.ZstdError as exc:
        if not out:
            raise LoadError(path, f"damaged zstd data ({exc})") from None
        notes.append(LoadWarning(f"the zstd data ends early or is damaged ({exc}); read what it holds"))
    return out


def _as_utf8(data: bytes | bytearray, path: str | None) -> tuple[bytes | bytearray, LoadError | None]:
    """UTF-16 / UTF-32 text (byte-order mark, or UTF-16 told by its zero bytes) re-encoded as UTF-8; other bytes as
    they are. When the bytes start like UTF-16 / UTF-32 but do not decode to text (a damaged first line of a UTF-8
    log may begin with ``FF FE``), they are returned as they are, with the error to raise if they are no UTF-8 log
    either."""
    for bom, codec, name in _BOMS:
        if data.startswith(bom):
            return _reencoded(data, codec, f"{name} text (byte-order mark {bom.hex(' ').upper()})", path)
    guess = _utf16_without_bom(data[:4096])
    if guess is not None:
        return _reencoded(data, guess, f"UTF-16 text without a byte-order mark ({guess[-2:].upper()})", path)
    return data, None


def _utf16_without_bom(head: bytes | bytearray) -> str | None:
    """``utf-16-le`` / ``utf-16-be`` when every other byte of ``head`` is zero, as in ASCII-heavy UTF-16."""
    if len(head) < 16:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) >= 0.9 * len(odd) and even.count(0) == 0:
        return "utf-16-le"
    if even.count(0) >= 0.9 * len(even) and odd.count(0) == 0:
        return "utf-16-be"
    return None


def _reencoded(data: bytes | bytearray, codec: str, what: str, path: str | None) -> tuple[bytes | bytearray, LoadError | None]:
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        return data, LoadError(path, f"{what} that does not decode at byte {exc.start} ({exc.reason}); expected a "
                               "JSON or JSONL agent log")
    start = text.lstrip("\ufeff \t\r\n")[:1]
    if start and not (start.isascii() and start.isprintable()):  # bytes that only happen to decode
        return data, LoadError(path, f"{what} that does not start like a log (first character U+{ord(start):04X}); "
                               "expected a JSON or JSONL agent log")
    try:
        return text.encode("utf-8"), None
    except UnicodeEncodeError as exc:  # a lone surrogate
        return data, LoadError(path, f"{what} holding an invalid character ({exc.reason})")


#: a byte that ``bytes.strip()`` keeps (not ASCII whitespace)
_NOT_BLANK = re.compile(rb"[^ \t\n\r\x0b\x0c]")


def _blank(data: bytes | bytearray, start: int = 0) -> bool:
    """``not data[start:].strip()``, without copying the bytes (the search stops at the first visible byte)."""
    return _NOT_BLANK.search(data, start) is None


def _starts_like_jsonl(body: bytes | bytearray) -> bool:
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


def _jsonl_document(body: bytes | bytearray, path: str | None, whole_error: json.JSONDecodeError | None) -> Document:
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


def _mostly_not_records(records: list[tuple[int, Any]], bad: list[LoadWarning]) -> bool:
    return len(records) < len(bad)


def _text_or_none(body: bytes | bytearray) -> str | None:
    """``body`` as UTF-8 text, or None when it is not."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _utf8_sig(line: bytes | bytearray) -> str:
    """``line.decode("utf-8-sig")`` (one leading BOM skipped; an error's offsets count from after it) without the
    codec's Python wrapper, which a log of thousands of lines pays per line."""
    return (line[3:] if line[:3] == b"\xef\xbb\xbf" else line).decode("utf-8")


def _parse_lines(body: bytes | bytearray) -> tuple[list[tuple[int, Any]], list[LoadWarning]]:
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
        try:  # decoded here, not by json.loads, which would take a line opening with FF FE for UTF-16
            records.append((number, json.loads(_utf8_sig(line))))
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


#: what a file that is not a regular file is, by its stat mode
_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character "
               "device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_path(path: str | Path) -> bytes:
    """Read a log file, turning OS errors into a :class:`LoadError`. Only a regular file (or a link to one) of at
    most :data:`MAX_FILE_BYTES` is read: anything else is refused at once, without waiting on it (a FIFO is opened
    without blocking)."""
    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise LoadError(name, f"cannot read the file ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd)
        if not stat.S_ISREG(mode.st_mode):
            kind = next((what for test, what in _FILE_KINDS if test(mode.st_mode)), "not a regular file")
            raise LoadError(name, f"this is {kind}, not a log file; expected a regular file")
        if mode.st_size > MAX_FILE_BYTES:
            raise LoadError(name, f"the file is {mode.st_size:,} bytes; at most {MAX_FILE_BYTES:,} are read")
        with os.fdopen(fd, "rb", buffering=0, closefd=False) as raw:
            data = raw.readall()
    except OSError as exc:
        raise LoadError(name, f"cannot read the file ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise LoadError(name, f"the file grew past {MAX_FILE_BYTES:,} bytes while it was read")
    return data
