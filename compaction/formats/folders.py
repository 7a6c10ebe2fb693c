"""Loading a folder, or several files at once, as one set of conversations.

A folder is first offered to the formats kept as folders (``FormatInfo.read_folder``, e.g. a Cline task folder);
when none claims it, every log file in it is read:

* recursively, in sorted order; hidden folders (``.git``…) are not entered, symbolic links to folders are not
  followed, a symbolic link to a file counts only when the file lies inside the folder, and anything that is not a
  regular file (a pipe, a device) is skipped; a subfolder that a folder format claims is read by that format;
* only files whose name ends with an extension a registered format reads (``.json``, ``.jsonl``, ``.traj``,
  ``.md``…), except ``<name>.meta.json`` beside ``<name>.jsonl`` (the metadata Claude Code keeps next to a
  subagent's transcript, not a log of its own);
* at most :data:`FOLDER_FILE_LIMIT` files: a larger folder is refused with a message saying so;
* a file that cannot be read becomes a load warning naming it (on the first conversation), not a failure of the
  whole; only when no file yields a conversation does the load fail, naming the first reasons.

Files of a format that spans several files (``FormatInfo.combine``: a Claude Code session and its subagent files)
are then linked. Conversation ids are made unique across files: when an id occurs in two files, every id of those
files is prefixed by the file's path relative to the folder (for a list of paths: its name, or the whole path when
two names are the same), and parent links follow the renaming.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..errors import LoadError
from .base import FormatInfo
from .base import formats

#: the most log files one folder load reads
FOLDER_FILE_LIMIT = 2000
#: how many failure reasons the error for a folder with no readable log names
_REASONS_SHOWN = 3

LoadFile = Callable[[Path, "str | None"], list[Conversation]]


@dataclass
class _Group:
    """The conversations read from one file (or one folder a folder format read), under a display label."""

    label: str
    path: str
    conversations: list[Conversation]


def load_folder(root: Path, format: str | None, load_file: LoadFile) -> list[Conversation]:
    """Every conversation in folder ``root`` (see the module notes); ``load_file`` reads one file."""
    claimed = _read_as_folder(root, format)
    if claimed is not None:
        return claimed
    groups: list[_Group] = []
    failures: list[LoadWarning] = []
    entries: list[Path | _Group] = []
    files = 0
    for entry in _entries(root, format):  # the walk stops as soon as the folder is known to be too large
        files += isinstance(entry, Path)
        if files > FOLDER_FILE_LIMIT:
            raise LoadError(str(root), f"the folder holds more than {FOLDER_FILE_LIMIT:,} log files; give a "
                            "subfolder or the files themselves")
        entries.append(entry)
    for entry in entries:
        if isinstance(entry, _Group):
            groups.append(entry)
        else:
            _load_into(entry, entry.relative_to(root).as_posix(), format, load_file, groups, failures)
    if not groups and not failures:
        raise LoadError(str(root), "the folder holds no log file (" + ", ".join(sorted(_extensions())) + ")")
    return _finish(groups, failures, str(root))


def load_many(paths: Sequence[Path], format: str | None, load_file: LoadFile) -> list[Conversation]:
    """Every conversation of several paths (files or folders), in the order given."""
    if not paths:
        raise LoadError(None, "no log given: expected a file, a folder or a list of paths")
    names = [p.name for p in paths]
    groups: list[_Group] = []
    failures: list[LoadWarning] = []
    for path in paths:
        label = path.name if names.count(path.name) == 1 else str(path)
        if path.is_dir():
            try:
                groups.append(_Group(label, str(path), load_folder(path, format, load_file)))
            except LoadError as exc:
                failures.append(LoadWarning(f"{label}: not loaded: {exc.reason}"))
        else:
            _load_into(path, label, format, load_file, groups, failures)
    return _finish(groups, failures, ", ".join(map(str, paths)))


def _load_into(path: Path, label: str, format: str | None, load_file: LoadFile, groups: list[_Group],
               failures: list[LoadWarning]) -> None:
    try:
        groups.append(_Group(label, str(path), load_file(path, format)))
    except LoadError as exc:
        failures.append(LoadWarning(f"{label}: not loaded: {_reason(exc)}", line=exc.line, field=exc.field))


def _reason(exc: LoadError) -> str:
    return exc.reason if exc.line is None and exc.field is None else str(exc).split(": ", 1)[-1]


def _finish(groups: list[_Group], failures: list[LoadWarning], where: str) -> list[Conversation]:
    if not groups:
        shown = "; ".join(w.message for w in failures[:_REASONS_SHOWN])
        more = f" (and {len(failures) - _REASONS_SHOWN} more)" if len(failures) > _REASONS_SHOWN else ""
        raise LoadError(where, f"no log could be read: {shown}{more}")
    groups = _combined(groups)
    conversations = _unique_ids(groups)
    if failures and conversations:
        first = conversations[0]
        conversations[0] = replace(first, source=replace(first.source, warnings=(*failures, *first.source.warnings)))
    return conversations


# ------------------------------------------------------------------------------------------------- walking
def _entries(root: Path, format: str | None) -> Iterator[Path | _Group]:
    """The log files under ``root`` in sorted order, and the subfolders a folder format read (as groups)."""
    extensions = _extensions()
    top = root.resolve()
    for folder, subfolders, names in os.walk(root, followlinks=False):
        here = Path(folder)
        if here != root:
            claimed = _read_as_folder(here, format)
            if claimed is not None:
                subfolders[:] = []
                yield _Group(here.relative_to(root).as_posix(), str(here), claimed)
                continue
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        present = set(names)
        for name in sorted(names):
            if not name.lower().endswith(extensions) or _is_companion(name, present):
                continue
            path = here / name
            if _regular_inside(path, top):
                yield path


def _is_companion(name: str, present: set[str]) -> bool:
    """``<stem>.meta.json`` next to ``<stem>.jsonl``: a log's metadata file, not a log."""
    return name.endswith(".meta.json") and name[: -len(".meta.json")] + ".jsonl" in present


def _regular_inside(path: Path, top: Path) -> bool:
    """A regular file (a symbolic link only when it points to one inside ``top``)."""
    try:
        if path.is_symlink():
            target = path.resolve(strict=True)
            if not target.is_relative_to(top):
                return False
            return target.is_file()
        return path.is_file()
    except (OSError, RuntimeError):  # a dangling or looping link
        return False


def _extensions() -> tuple[str, ...]:
    return tuple(sorted({ext.lower() for info in formats().values() for ext in info.extensions}))


def _read_as_folder(folder: Path, format: str | None) -> list[Conversation] | None:
    """The conversations of ``folder`` when a folder format claims it, else None."""
    candidates: list[FormatInfo] = [f for f in formats().values() if f.read_folder is not None]
    if format:
        candidates = [f for f in candidates if f.name == format]
    for info in candidates:
        try:
            assert info.read_folder is not None  # the candidates are the folder formats
            found = info.read_folder(folder)
        except LoadError:
            raise
        except Exception as exc:  # noqa: BLE001 - the contract: only LoadError escapes a load
            raise LoadError(str(folder), f"could not be read as {info.title}: unexpected {type(exc).__name__} "
                            f"({exc})", internal=True) from exc
        if found is not None:
            if not found:
                raise LoadError(str(folder), f"no conversation found in this {info.title} folder")
            return found
    return None


# ------------------------------------------------------------------------------------------------- linking
def _combined(groups: list[_Group]) -> list[_Group]:
    """Groups after each multi-file format linked its own conversations (others pass unchanged)."""
    known = formats()
    by_format: dict[str, list[int]] = {}
    for i, group in enumerate(groups):
        kinds = {c.format for c in group.conversations}
        if len(kinds) == 1:
            by_format.setdefault(kinds.pop(), []).append(i)
    for name, indices in by_format.items():
        info = known.get(name)
        if info is None or info.combine is None or len(indices) < 2:
            continue
        combined = info.combine([groups[i].conversations for i in indices])
        for i, conversations in zip(indices, combined, strict=True):
            groups[i] = replace(groups[i], conversations=conversations)
    return [g for g in groups if g.conversations]


def _unique_ids(groups: list[_Group]) -> list[Conversation]:
    """All conversations, ids prefixed by their file's label where an id occurs in more than one file."""
    owners: dict[str, set[int]] = {}
    for i, group in enumerate(groups):
        for conv in group.conversations:
            owners.setdefault(conv.id, set()).add(i)
    prefixed = {i for shared in owners.values() if len(shared) > 1 for i in shared}
    final: dict[tuple[str, str], str] = {}
    for i, group in enumerate(groups):
        for conv in group.conversations:
            final[(group.path, conv.id)] = f"{group.label}/{conv.id}" if i in prefixed else conv.id
    out: list[Conversation] = []
    for group in groups:
        for conv in group.conversations:
            new_id = final[(group.path, conv.id)]
            parent = conv.source.parent
            if parent is not None:
                parent_path = conv.source.meta.get("parent_path", group.path)
                parent = final.get((parent_path, parent), parent)
            if new_id != conv.id or parent != conv.source.parent:
                conv = replace(conv, source=replace(conv.source, conversation_id=new_id, parent=parent))
            out.append(conv)
    return out
