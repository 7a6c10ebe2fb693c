"""Log formats: detection, reading into :class:`~compaction.conversation.Conversation`, and writing back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import cast

from ..conversation import Conversation
from ..errors import ConfigError
from ..errors import LoadError
from ..submodules import import_submodules
from .base import Document
from .base import FormatInfo
from .base import formats
from .base import parse_document
from .base import read_path
from .base import register_format
from .folders import FOLDER_FILE_LIMIT
from .folders import load_folder
from .folders import load_many

#: what :func:`load` reads: a file or folder path, a log's bytes, or a list (or tuple) of paths
LogSource = str | Path | bytes | Sequence[str | Path]


def load_all() -> None:
    """Import every format module of this package (each registers itself; idempotent)."""
    import_submodules(__name__, __path__)


def detect(doc: Document) -> tuple[FormatInfo, list[str]]:
    """The first format that fits, and the reasons the earlier ones did not; ``LoadError`` if none fits."""
    reasons: list[str] = []
    for info in formats().values():
        why = _safe_detect(info, doc)
        if why is None:
            return info, reasons
        reasons.append(f"{info.name}: {why}")
    raise LoadError(doc.path, "unknown log format. Tried: " + "; ".join(reasons))


def _safe_detect(info: FormatInfo, doc: Document) -> str | None:
    """A detector that trips over unexpected data simply does not fit."""
    try:
        return info.detect(doc)
    except Exception as exc:  # noqa: BLE001 - any reader failure becomes a reason, never a crash
        return f"unexpected data ({type(exc).__name__}: {exc})"


def _safe_read(info: FormatInfo, doc: Document) -> list[Conversation]:
    """Read, turning a reader's unexpected exception into a typed :class:`LoadError`."""
    try:
        return info.read(doc)
    except LoadError:
        raise
    except RecursionError:
        raise LoadError(doc.path, "the log is nested too deeply to read") from None
    except Exception as exc:  # noqa: BLE001 - the contract: only LoadError escapes a load
        raise LoadError(doc.path, f"could not be read as {info.title}: unexpected {type(exc).__name__} ({exc})",
                        internal=True) from exc


def load_all_conversations(source: LogSource, format: str | None = None,
                           name: str | None = None, *, folder: str | Path | None = None) -> list[Conversation]:
    """Every conversation in a log: a file path, its bytes (with an optional display ``name``), a folder, or a list
    of paths (files or folders). See :mod:`.folders` for how a folder is read. Files that belong with a log (Cline's
    ``ui_messages.json``) are read from the log's own folder; for bytes only from ``folder``, when the caller knows
    where they came from on this machine (never for an upload)."""
    if isinstance(source, (bytes, bytearray)):
        return _load_document(bytes(source), name, format, Path(folder) if folder is not None else None)
    if isinstance(source, (list, tuple)):
        return load_many([Path(p) for p in source], format, _load_file)
    path = Path(cast("str | Path", source))  # lists and tuples are read above
    if path.is_dir():
        return load_folder(path, format, _load_file)
    return _load_file(path, format)


def _load_file(path: Path, format: str | None) -> list[Conversation]:
    return _load_document(read_path(path), str(path), format, path.parent)


def _load_document(data: bytes, path: str | None, format: str | None, where: Path | None) -> list[Conversation]:
    doc = parse_document(data, path)
    doc.folder = where
    if format:
        known = formats()
        if format not in known:
            raise LoadError(path, f"unknown format {format!r}; known formats: {', '.join(known)}")
        info = known[format]
        why = _safe_detect(info, doc)
        if why is not None:
            raise LoadError(path, f"does not look like {info.title}: {why}")
    else:
        info, _ = detect(doc)
    conversations = _safe_read(info, doc)
    if doc.bad_lines and conversations:  # file-level warnings go on the first conversation only
        conversations = [_with_bad_lines(conversations[0], doc), *conversations[1:]]
    if not conversations:
        raise LoadError(path, f"no conversation found in this {info.title} log")
    return conversations


def _with_bad_lines(conv: Conversation, doc: Document) -> Conversation:
    from dataclasses import replace

    return replace(conv, source=replace(conv.source, warnings=(*doc.bad_lines, *conv.source.warnings)))


def load(source: LogSource, format: str | None = None, conversation: str | None = None,
         name: str | None = None) -> Conversation:
    """Load one conversation (the first, or the one with id ``conversation``) of a file, its bytes, a folder or a
    list of paths."""
    conversations = load_all_conversations(source, format, name)
    if conversation is None:
        return conversations[0]
    for conv in conversations:
        if conv.id == str(conversation):
            return conv
    ids = ", ".join(c.id for c in conversations)
    where = name if isinstance(source, (bytes, bytearray)) else (
        ", ".join(map(str, source)) if isinstance(source, (list, tuple)) else str(source))
    raise LoadError(where,
                    f"no conversation {conversation!r} in this log; its conversations are: {ids}")


def write(conv: Conversation, format: str) -> Any:
    """The JSON value ``convert --to format`` writes."""
    known = formats()
    info = known.get(format)
    if info is None or info.write is None:
        writable = ", ".join(n for n, f in known.items() if f.write is not None)
        raise ConfigError(f"cannot write format {format!r}; writable formats: {writable}")
    return info.write(conv)


__all__ = [
    "FOLDER_FILE_LIMIT", "Document", "FormatInfo", "LoadError", "detect", "formats", "load", "load_all_conversations", "parse_document",
    "register_format", "write",
]
