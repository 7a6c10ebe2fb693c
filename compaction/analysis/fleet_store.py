"""Where a fleet's rows go as they are computed: an appendable CSV file or a Parquet folder, and the index of the
files it has read.

The store is also the fleet's cache and its resume point: a row is keyed by (file digest, conversation, setup key),
so a re-run with the same output computes only the rows it does not hold yet — after an interruption, or after
files or setups changed. Beside the rows, ``<output>.index.jsonl`` (``_index.jsonl`` inside a Parquet folder) keeps
what indexing found per file (its size, modification time, digest and conversations), so an unchanged file is not
even read again.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING
from typing import Any
from typing import TextIO

from .fleet_work import FileIndex

if TYPE_CHECKING:
    from _csv import Writer

#: the columns of a fleet row, in the order files hold them
COLUMNS = ("log", "digest", "conversation", "conversation_index", "format", "llm_calls", "setup", "base", "values",
           "setup_key", "context_window", "dollars", "baseline_dollars", "peak_tokens", "tokens_sent", "compactions",
           "declined", "thrash", "calls_over_window", "information_loss", "error")
INTS = frozenset(("conversation_index", "llm_calls", "context_window", "peak_tokens", "tokens_sent", "compactions",
                  "declined", "thrash", "calls_over_window", "information_loss"))
FLOATS = frozenset(("dollars", "baseline_dollars"))
#: rows a Parquet part holds before it is written (what an interruption can cost)
PARQUET_PART_ROWS = 5_000


def canonical(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row with the fleet's columns only, in their order, and no empty values: the same dict whether it was just
    computed or read back from a file."""
    return {k: row[k] for k in COLUMNS if row.get(k) is not None}


def row_key(row: Mapping[str, Any]) -> tuple[str, int | None, str | None]:
    """What a row is cached under: (file digest, conversation position, setup key)."""
    return row.get("digest", ""), row.get("conversation_index"), row.get("setup_key")


_VALUES_AT = COLUMNS.index("values")
#: ``json.dumps(value, sort_keys=True)``, without building the encoder per row
_encode_values = json.JSONEncoder(sort_keys=True).encode


def _to_text(column: str, value: Any) -> str:
    if value is None:
        return ""
    if column == "values":
        return _encode_values(value)
    return repr(value) if isinstance(value, float) else str(value)


#: value types whose JSON their type and repr decide
_PLAIN = frozenset({str, int, float, bool, type(None)})
#: encodings of swept values already written (a fleet's rows repeat a few), and how many are kept at most
_values_texts: dict[tuple[tuple[Any, ...], tuple[str, ...]], str] = {}
VALUES_TEXTS_KEPT = 4096


def _values_text(values: Any) -> str:
    """``_encode_values(values)``: a dict of plain values is encoded once (building the encoder took most of a
    row's writing), known by its keys and its values' reprs."""
    if type(values) is not dict or not all(type(v) in _PLAIN for v in values.values()):
        return _encode_values(values)
    key = (tuple(values), tuple(map(repr, values.values())))
    text = _values_texts.get(key)
    if text is None:
        if len(_values_texts) >= VALUES_TEXTS_KEPT:
            _values_texts.clear()
        text = _values_texts[key] = _encode_values(values)
    return text


def _csv_fields(row: Mapping[str, Any]) -> list[Any]:
    """A row's fields as :func:`_to_text` writes them, left to the CSV writer where it writes the same (it writes
    None as empty, a float by its repr and anything else by str)."""
    fields = [row.get(c) for c in COLUMNS]
    values = fields[_VALUES_AT]
    if values is not None:
        # (a setup run with no swept values, the commonest row: its encoding spelled out)
        fields[_VALUES_AT] = "{}" if isinstance(values, dict) and not values else _values_text(values)
    return fields


#: quoted texts a row store keeps (a corpus's logs, digests, conversations and setups repeat; an error text may not)
QUOTED_KEPT = 1 << 16


class _CsvLines:
    """Rows as ``csv.writer`` (dialect ``excel``) writes them, each distinct text quoted by the writer once: a fleet's
    rows repeat their log, digest, conversation and setup, and the writer's character-by-character quoting of them was
    most of what writing a row cost."""

    def __init__(self) -> None:
        self._quoted: dict[str, str] = {}
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer)

    def _quote(self, text: str) -> str:
        """``text`` as the writer writes it as one field of a row (at most :data:`QUOTED_KEPT` texts are kept)."""
        hit = self._quoted.get(text)
        if hit is None:
            if len(self._quoted) >= QUOTED_KEPT:
                self._quoted.clear()
            self._buffer.seek(0)
            self._buffer.truncate()
            self._writer.writerow((text, ""))  # (with another field: a lone empty field is written as "")
            hit = self._quoted[text] = self._buffer.getvalue()[:-3]  # less ",\r\n"
        return hit

    def line(self, fields: Sequence[Any]) -> str:
        """One row's line: the writer writes None as empty and anything else by its text (a float's str is its repr),
        and an int's or a float's text never needs quoting."""
        quoted, parts = self._quoted, []
        for value in fields:
            kind = type(value)
            if value is None:
                parts.append("")
            elif kind is str:
                text = quoted.get(value)
                parts.append(text if text is not None else self._quote(value))
            else:
                parts.append(str(value) if kind is int or kind is float else self._quote(str(value)))
        if parts == [""]:  # (a lone empty field is written quoted, so the line is not empty)
            return '""\r\n'
        return ",".join(parts) + "\r\n"


def _from_text(column: str, text: str) -> Any:
    if text == "":
        return None
    if column in INTS:
        return int(text)
    if column in FLOATS:
        return float(text)
    if column == "values":
        return json.loads(text)
    return text


class RowStore:
    """The rows of one output (``.csv``: appended line by line; ``.parquet``: a folder of parts), read and added
    to. ``ValueError`` names an output that cannot be used (another kind of file, another version's columns)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.parquet = self.path.suffix.lower() == ".parquet"
        if not self.parquet and self.path.suffix.lower() != ".csv":
            raise ValueError(f"{path}: a fleet streams its rows to a .csv file or a .parquet folder")
        if self.parquet and self.path.exists() and not self.path.is_dir():
            raise ValueError(f"{path}: expected a folder of Parquet parts (this output is written as one)")
        self._buffer: list[dict[str, Any]] = []
        self._fh: TextIO | None = None
        self._writer: Writer | None = None
        self._lines = _CsvLines()
        self._parts = 0
        self._index_fh: TextIO | None = None

    # ------------------------------------------------------------------------------------------- the index
    @property
    def index_path(self) -> Path:
        return self.path / "_index.jsonl" if self.parquet else self.path.with_name(self.path.name + ".index.jsonl")

    def read_index(self) -> dict[str, FileIndex]:
        """What earlier runs found per file path, the latest entry of each (a line that cannot be read is skipped:
        that file is indexed again)."""
        found: dict[str, FileIndex] = {}
        try:
            with open(self.index_path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        entry = FileIndex.from_json(json.loads(line))
                    except (ValueError, KeyError, TypeError):
                        continue
                    found[entry.path] = entry
        except OSError:
            return {}
        return found

    def add_index(self, entry: FileIndex) -> None:
        """Record what indexing found for one file (a line appended and flushed)."""
        if self._index_fh is None:
            self.index_path.parent.mkdir(parents=True, exist_ok=True)
            self._index_fh = open(self.index_path, "a", encoding="utf-8")
        self._index_fh.write(json.dumps(entry.to_json()) + "\n")
        self._index_fh.flush()

    # ------------------------------------------------------------------------------------------- the rows
    def rows(self) -> Iterator[dict[str, Any]]:
        """Every row the output holds (canonical), oldest first."""
        if self.parquet:
            yield from self._parquet_rows()
            return
        if not self.path.exists():
            return
        self._repair_tail()
        with open(self.path, newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None:
                return
            if tuple(header) != COLUMNS:
                raise ValueError(f"{self.path}: not a fleet output of this version (its columns are "
                                 f"{', '.join(header[:6])}…); choose another output or remove it")
            for line in reader:
                if len(line) == len(COLUMNS):
                    yield canonical({c: _from_text(c, t) for c, t in zip(COLUMNS, line)})

    def _repair_tail(self) -> None:
        """Cut a last line an interruption left half-written (it would join the next row)."""
        size = self.path.stat().st_size
        if size == 0:
            return
        with open(self.path, "rb+") as fh:
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return
            chunk = min(size, 1 << 20)
            fh.seek(size - chunk)
            tail = fh.read(chunk)
            cut = tail.rfind(b"\n")
            fh.truncate(size - chunk + cut + 1 if cut >= 0 else 0)

    def _parquet_rows(self) -> Iterator[dict[str, Any]]:
        if not self.path.is_dir():
            return
        pq = _parquet()
        for part in sorted(self.path.glob("part-*.parquet")):
            table = pq.read_table(part)
            for record in table.to_pylist():
                yield canonical({c: _from_text(c, record.get(c) or "") if c in ("values",) else record.get(c)
                                 for c in COLUMNS})
            self._parts = max(self._parts, int(part.stem.split("-")[1]))

    def append(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Add rows (a CSV line each, flushed at once; Parquet in parts of :data:`PARQUET_PART_ROWS`)."""
        if self.parquet:
            self._buffer.extend(canonical(r) for r in rows)
            if len(self._buffer) >= PARQUET_PART_ROWS:
                self._write_part()
            return
        if self._writer is None or self._fh is None:  # (opened together)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            new = not self.path.exists() or self.path.stat().st_size == 0
            if not new:
                self._repair_tail()
            self._fh = open(self.path, "a", newline="", encoding="utf-8")
            self._writer = csv.writer(self._fh)
            if new:
                self._writer.writerow(COLUMNS)
        self._fh.write("".join(map(self._lines.line, map(_csv_fields, rows))))
        self._fh.flush()

    def _write_part(self) -> None:
        if not self._buffer:
            return
        pa, pq = _arrow(), _parquet()
        self.path.mkdir(parents=True, exist_ok=True)
        if not self._parts:
            self._parts = max((int(p.stem.split("-")[1]) for p in self.path.glob("part-*.parquet")), default=0)
        self._parts += 1
        columns = {c: [_to_text(c, r.get(c)) or None if c == "values" else r.get(c) for r in self._buffer]
                   for c in COLUMNS}
        types = {c: pa.int64() if c in INTS else pa.float64() if c in FLOATS else pa.string() for c in COLUMNS}
        table = pa.table({c: pa.array(v, type=types[c]) for c, v in columns.items()})
        target = self.path / f"part-{self._parts:05d}.parquet"
        tmp = target.with_name(target.name + ".tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, target)
        self._buffer.clear()

    def close(self) -> None:
        """Write what is buffered and close the file."""
        if self.parquet:
            self._write_part()
        if self._fh is not None:
            self._fh.close()
            self._fh = self._writer = None
        if self._index_fh is not None:
            self._index_fh.close()
            self._index_fh = None


def _arrow() -> ModuleType:
    try:
        import pyarrow
    except ImportError as exc:  # pragma: no cover - pyarrow comes with streamlit
        raise ValueError("Parquet output needs pyarrow (pip install pyarrow); or write a .csv") from exc
    module: ModuleType = pyarrow  # (untyped: Any to mypy)
    return module


def _parquet() -> ModuleType:
    _arrow()
    import pyarrow.parquet

    module: ModuleType = pyarrow.parquet
    return module
