"""The corpus of a fleet: log files from folders, lists of files, or every session ``discover`` finds; their digests.

A fleet never reads a log here: it only finds the files (workers read them) and fingerprints them, so that a re-run
recomputes only the logs whose bytes changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from ..formats.base import compressed_suffixes

#: the file endings a folder search takes as logs; Aider's Markdown histories are taken by their name
LOG_SUFFIXES = (".json", ".jsonl", ".traj", ".eval", *compressed_suffixes())
AIDER_HISTORY = "aider.chat.history.md"


def _is_log_name(path: Path) -> bool:
    return path.suffix.lower() in LOG_SUFFIXES or path.name.lower().endswith(AIDER_HISTORY)


def find_logs(folder: str | Path) -> list[Path]:
    """Every log file under ``folder`` (recursively), sorted; ``ValueError`` when it is not a folder."""
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"{folder}: not a folder of logs")
    return sorted(p for p in root.rglob("*") if p.is_file() and _is_log_name(p))


def corpus(sources: Iterable[str | Path] = (), *, discovered: bool = False, home: str | Path | None = None,
           agents: Iterable[str] | None = None) -> list[Path]:
    """The log files of ``sources`` (each a folder, searched recursively, or a file) and, with ``discovered``,
    of every session :func:`compaction.discover.discover` finds under ``home`` (its file, or the folder its reader
    reads as one log); each once, in the order given.

    ``ValueError`` names a source that is neither a file nor a folder."""
    found: dict[str, Path] = {}
    for source in sources:
        path = Path(source).expanduser()
        if path.is_dir():
            for p in find_logs(path):
                found.setdefault(str(p), p)
        elif path.is_file():
            found.setdefault(str(path), path)
        else:
            raise ValueError(f"{source}: no such file or folder (expected a log file or a folder of logs)")
    if discovered:
        from ..discover import discover

        for session in discover(home, agents=agents):
            path = Path(session.path)  # a file, or a folder its agent's reader reads as one log (Cline's tasks)
            if path.exists():
                found.setdefault(str(path), path)
    return list(found.values())


def file_digest(path: str | Path, chunk: int = 1 << 20) -> str:
    """A fingerprint of the file's bytes (BLAKE2b, 128 bits, hex): the cache key of everything computed from it. A
    folder (a session kept as several files) is fingerprinted by the names and bytes of every file in it."""
    h = hashlib.blake2b(digest_size=16)
    root = Path(path)
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
    buffer = bytearray(chunk)  # read into one buffer: a fresh megabyte a read costs its page faults
    view = memoryview(buffer)
    for file in files:
        if root.is_dir():
            h.update(str(file.relative_to(root)).encode("utf-8", "surrogateescape") + b"\0")
        with open(file, "rb", buffering=0) as fh:
            while size := fh.readinto(buffer):
                h.update(view[:size])
    return h.hexdigest()
