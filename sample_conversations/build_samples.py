"""Build the sample agent logs that ship with Compaction Lab.

Three OpenAI chat-completions logs are written next to this script:

* ``coding_agent.openai.json``   -- an agent fixing an encoding bug in a small
  Python project ("ledgerlite", a bank-statement importer),
* ``research_agent.openai.json`` -- an agent researching how Python's ``with``
  statement, exception chaining and exception groups interact,
* ``support_agent.openai.json``  -- a customer-support agent handling a damaged
  delivery, refunds and an address change over several user turns.

Everything is deterministic: file contents shown to the coding agent are the
project sources embedded below plus real files of the running interpreter's
standard library, web pages in the research log are built from the Python
reference documentation shipped in ``pydoc_data`` and from standard-library
sources, and the few random numbers come from seeded ``random.Random``
instances.  Re-running the script on the same interpreter produces
byte-identical files.

Usage (from the repository root)::

    python sample_conversations/build_samples.py
"""

from __future__ import annotations

import codecs
import datetime as dt
import dis
import hashlib
import inspect
import json
import random
import re
import sys
import sysconfig
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parent
STDLIB = Path(sysconfig.get_paths()["stdlib"])
PY_VERSION = "{}.{}.{}".format(*sys.version_info[:3])
PY_SHORT = "{}.{}".format(*sys.version_info[:2])
#: Where the standard library lives on the (fictional) machines of the logs.
PY_LIB = f"/usr/lib/python{PY_SHORT}"


# ---------------------------------------------------------------------------
# Generic helpers for building chat-completions logs
# ---------------------------------------------------------------------------


def dedent(text: str) -> str:
    """Dedent a triple-quoted literal and drop its leading newline."""
    return textwrap.dedent(text).lstrip("\n")


def para(text: str) -> str:
    """Dedent *text* and join hard-wrapped lines into paragraphs.

    Blank lines separate paragraphs; lines starting with ``-``, ``*``, ``|``,
    ``#``, a digit and a dot, or four spaces are kept on their own line so
    that lists, tables and code survive.
    """
    out: list[str] = []
    for block in dedent(text).split("\n\n"):
        lines = block.split("\n")
        merged: list[str] = []
        for line in lines:
            keep = re.match(r"(\s{4}|[-*|#>]|\d+\.\s|```)", line) or not merged
            if keep or re.match(r"(\s{4}|```)", merged[-1]):
                merged.append(line)
            else:
                merged[-1] += " " + line.strip()
        out.append("\n".join(merged))
    return "\n\n".join(out).strip() + "\n"


def tool_schema(name: str, description: str, params: dict[str, dict[str, Any]], required: list[str]) -> dict:
    """Return an OpenAI function-tool definition."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": params, "required": required},
        },
    }


def prop(kind: str, description: str, **extra: Any) -> dict[str, Any]:
    """One JSON-schema property."""
    return {"type": kind, "description": description, **extra}


@dataclass
class Call:
    """One tool call made by the assistant together with the tool's answer."""

    name: str
    args: dict[str, Any]
    result: str


class Chat:
    """Accumulates the messages of one log and hands out stable tool-call ids."""

    _ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

    def __init__(self, slug: str, tools: list[dict]) -> None:
        self.slug = slug
        self.tools = tools
        self.messages: list[dict[str, Any]] = []
        self._calls = 0

    def _call_id(self) -> str:
        self._calls += 1
        digest = hashlib.sha256(f"{self.slug}/{self._calls}".encode()).digest()
        return "call_" + "".join(self._ALPHABET[b % len(self._ALPHABET)] for b in digest[:24])

    def system(self, text: str) -> None:
        self.messages.append({"role": "system", "content": text})

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def step(self, *calls: Call, say: str | None = None) -> None:
        """One LLM call that requests *calls* (in parallel if several)."""
        ids = [self._call_id() for _ in calls]
        self.messages.append(
            {
                "role": "assistant",
                "content": say,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.args, ensure_ascii=False)},
                    }
                    for call_id, call in zip(ids, calls, strict=True)
                ],
            }
        )
        for call_id, call in zip(ids, calls, strict=True):
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": call.result})

    def reply(self, text: str) -> None:
        """A final assistant message without tool calls."""
        self.messages.append({"role": "assistant", "content": text})

    def to_dict(self) -> dict[str, Any]:
        used = {c["function"]["name"] for m in self.messages for c in m.get("tool_calls", [])}
        declared = {t["function"]["name"] for t in self.tools}
        assert used <= declared, f"{self.slug}: undeclared tools {used - declared}"
        return {"messages": self.messages, "tools": self.tools}


def stdlib_source(relpath: str) -> str:
    """Text of a standard-library module of the running interpreter."""
    return (STDLIB / relpath).read_text(encoding="utf-8")


def line_of(text: str, needle: str, start: int = 1) -> int:
    """1-based number of the first line at or after *start* containing *needle*."""
    for number, line in enumerate(text.splitlines(), 1):
        if number >= start and needle in line:
            return number
    raise ValueError(f"{needle!r} not found")
# ---------------------------------------------------------------------------
# ledgerlite: the project the coding agent works on, as it is when the log starts
# ---------------------------------------------------------------------------


def _src(text: str) -> str:
    """Strip the newline that follows the opening quotes of a source literal."""
    return text[1:]


LEDGERLITE_FILES: dict[str, str] = {
    "README.md": _src(
r'''
# ledgerlite

Turn the CSV exports of German banks into plain-text accounting entries
(hledger / ledger / beancount style).

```
$ ledgerlite import Umsaetze_2024-05.csv --rules rules.json
2024-05-01 Hausverwaltung Böttcher & Söhne | Miete Mai 2024 Whg. 3. OG links
    Expenses:Housing:Rent                                     890.00 EUR
    Assets:Bank:Checking
```

## Supported exports

| Bank / format                     | Encoding            | Profile name       |
|-----------------------------------|---------------------|--------------------|
| Sparkasse "CSV-CAMT V2"           | UTF-8 with BOM      | `sparkasse-camt`   |
| DKB (new online banking, 2023+)   | UTF-8               | `dkb-2023`         |
| Volksbank / Raiffeisenbank (old)  | Windows-1252        | `volksbank-legacy` |

The encoding and the CSV dialect (delimiter, quoting, metadata lines above
the header) are detected automatically; see `ledgerlite/sniff.py`. The
column layout is picked by matching the header row against the known
profiles. See `docs/bank-formats.md` for the exact column lists.

If detection gets it wrong you can override it:

```
ledgerlite import export.csv --encoding cp1252 --delimiter ';' --profile volksbank-legacy
ledgerlite detect export.csv      # prints what was detected
```

## Rules

Categorisation rules live in a JSON file:

```json
{
  "default_account": "Expenses:Unsorted",
  "rules": [
    {"account": "Expenses:Food:Coffee", "payee": "(?i)caf[eé]"},
    {"account": "Income:Salary", "memo": "LOHN|GEHALT", "min_amount": 1000}
  ]
}
```

`ledgerlite check-rules rules.json` validates a file and reports syntax
errors as `file:line:column: message`, so editors can jump to them.

## Development

```
python -m venv .venv && . .venv/bin/activate
pip install -e '.[dev]'
pytest
```

Test fixtures in `tests/fixtures/` are anonymised real exports; keep the
byte layout (BOM, line endings, encoding) intact when editing them.
'''),
    "CHANGELOG.md": _src(
r'''
# Changelog

## Unreleased

## 0.9.1 (2024-06-02)

- `import_many()` drops transactions that appear in two overlapping exports.
- Rules: `min_amount`/`max_amount` accept decimals.

## 0.9.0 (2024-05-26)

- Format detection rewritten: encoding, delimiter and preamble are now
  detected from the first 8 KiB of the file instead of reading it twice
  (`ledgerlite/sniff.py`, replaces `guess_format()` in `importer.py`).
- Profile matching only looks at the distinctive columns (payee, memo,
  amount), so exports with renamed date columns are still recognised.
- `check-rules` reports `file:line:column` positions for JSON syntax errors.
- New profile `dkb-2023` for the DKB export format introduced in 2023.

## 0.8.2 (2024-02-11)

- Volksbank: amounts with a separate S/H column are signed correctly.
- `--output` writes UTF-8 regardless of the locale.

## 0.8.0 (2023-11-19)

- First release with the `detect` sub-command.
'''),
    "pyproject.toml": _src(
r'''
[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "ledgerlite"
version = "0.9.1"
description = "Turn German bank CSV exports into plain-text accounting entries"
readme = "README.md"
requires-python = ">=3.10"
license = { text = "MIT" }
dependencies = []

[project.optional-dependencies]
dev = ["pytest>=8", "ruff>=0.4"]

[project.scripts]
ledgerlite = "ledgerlite.cli:main"

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra"

[tool.ruff]
line-length = 110
'''),
    "ledgerlite/__init__.py": _src(
r'''
"""ledgerlite: turn bank CSV exports into plain-text ledger entries."""

from .config import ConfigError, Rule, Rules, load_rules, parse_rules
from .importer import ImportFailed, ImportResult, import_file
from .models import Transaction
from .sniff import FileFormat, SniffError, detect_format

__all__ = [
    "ConfigError",
    "FileFormat",
    "ImportFailed",
    "ImportResult",
    "Rule",
    "Rules",
    "SniffError",
    "Transaction",
    "detect_format",
    "import_file",
    "load_rules",
    "parse_rules",
]

__version__ = "0.9.1"
'''),
    "ledgerlite/amounts.py": _src(
r'''
"""Parsing of amounts and dates as they appear in German bank exports."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal, InvalidOperation

_AMOUNT = re.compile(
    r"""
    ^\s*
    (?P<sign>[-+\u2212])?\s*          # ASCII or typographic minus
    (?P<int>\d{1,3}(?:[.\s\u202f]\d{3})*|\d+)
    (?:,(?P<frac>\d{1,2}))?
    \s*(?:€|EUR)?\s*
    (?P<trailing>[-+SH])?\s*$         # some banks put the sign (or S/H) at the end
    """,
    re.VERBOSE,
)

_DATE_FORMATS = ("%d.%m.%Y", "%d.%m.%y", "%Y-%m-%d")


class AmountError(ValueError):
    """Raised for strings that do not look like an amount."""


def parse_amount(text: str) -> Decimal:
    """Parse ``"-1.234,56"``, ``"1 234,56 €"``, ``"12,00 S"`` and friends."""
    match = _AMOUNT.match(text)
    if not match:
        raise AmountError(f"not an amount: {text!r}")
    digits = re.sub(r"[.\s\u202f]", "", match["int"])
    frac = (match["frac"] or "0").ljust(2, "0")
    try:
        value = Decimal(f"{digits}.{frac}")
    except InvalidOperation as exc:  # pragma: no cover - regex guarantees digits
        raise AmountError(f"not an amount: {text!r}") from exc
    negative = match["sign"] in ("-", "\u2212") or match["trailing"] in ("-", "S")
    return -value if negative else value


def parse_date(text: str) -> dt.date:
    """Parse the date formats used by the supported banks."""
    text = text.strip()
    for fmt in _DATE_FORMATS:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise ValueError(f"unrecognised date: {text!r}")


def format_amount(value: Decimal) -> str:
    """Format *value* the German way, e.g. ``-1.234,56``."""
    sign = "-" if value < 0 else ""
    whole, _, frac = f"{abs(value):.2f}".partition(".")
    groups = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    return f"{sign}{'.'.join(groups)},{frac}"
'''),
    "ledgerlite/cli.py": _src(
r'''
"""Command line interface: ``ledgerlite detect|import|check-rules``."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from . import __version__
from .config import ConfigError, load_rules
from .importer import ImportFailed, import_many
from .sniff import FileFormat, SniffError, detect_format


def _format_override(args: argparse.Namespace, path: Path) -> FileFormat | None:
    if not (args.encoding or args.delimiter):
        return None
    detected = detect_format(path)
    return FileFormat(
        encoding=args.encoding or detected.encoding,
        delimiter=args.delimiter or detected.delimiter,
        quotechar=detected.quotechar,
        skip_lines=detected.skip_lines,
    )


def cmd_detect(args: argparse.Namespace) -> int:
    status = 0
    for path in args.files:
        try:
            print(f"{path}: {detect_format(path).describe()}")
        except (OSError, SniffError) as exc:
            print(f"{path}: error: {exc}", file=sys.stderr)
            status = 1
    return status


def cmd_import(args: argparse.Namespace) -> int:
    rules = load_rules(args.rules) if args.rules else None
    if args.encoding or args.delimiter:
        from .importer import import_file

        results = [
            import_file(p, profile=args.profile, fmt=_format_override(args, Path(p)))
            for p in args.files
        ]
    else:
        results = import_many(args.files, profile=args.profile)
    out = args.output or sys.stdout
    for result in results:
        print(result.summary(), file=sys.stderr)
        for problem in result.problems:
            print(f"  {problem}", file=sys.stderr)
        for txn in result.transactions:
            category = rules.categorise(txn) if rules else "Expenses:Unsorted"
            print("\n".join(txn.ledger_lines(args.account, category)), file=out)
            print(file=out)
    return 0


def cmd_check_rules(args: argparse.Namespace) -> int:
    rules = load_rules(args.rules)
    print(f"{args.rules}: {len(rules.rules)} rules, default account {rules.default_account}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ledgerlite", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log format detection details")
    sub = parser.add_subparsers(dest="command", required=True)

    detect = sub.add_parser("detect", help="print the detected format of exports")
    detect.add_argument("files", nargs="+")
    detect.set_defaults(func=cmd_detect)

    imp = sub.add_parser("import", help="convert exports to ledger entries")
    imp.add_argument("files", nargs="+")
    imp.add_argument("--account", default="Assets:Bank:Checking")
    imp.add_argument("--profile", help="force a bank profile instead of matching the header")
    imp.add_argument("--rules", type=Path, help="rules.json for categorisation")
    imp.add_argument("--encoding", help="override the detected encoding")
    imp.add_argument("--delimiter", help="override the detected delimiter")
    imp.add_argument("-o", "--output", type=argparse.FileType("w", encoding="utf-8"))
    imp.set_defaults(func=cmd_import)

    check = sub.add_parser("check-rules", help="validate a rules file")
    check.add_argument("rules", type=Path)
    check.set_defaults(func=cmd_check_rules)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, format="%(message)s")
    try:
        return args.func(args)
    except (ImportFailed, ConfigError, SniffError) as exc:
        print(f"ledgerlite: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
'''),
    "ledgerlite/config.py": _src(
r'''
"""Categorisation rules, loaded from a JSON file.

Example ``rules.json``::

    {
      "default_account": "Expenses:Unsorted",
      "rules": [
        {"account": "Expenses:Food:Coffee", "payee": "(?i)caf[eé]"},
        {"account": "Income:Salary", "memo": "LOHN|GEHALT", "min_amount": 1000}
      ]
    }

``payee`` and ``memo`` are regular expressions searched (not matched) in
the respective field; ``min_amount``/``max_amount`` compare against the
absolute amount.  The first matching rule wins.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from .models import Transaction

_RULE_KEYS = {"account", "payee", "memo", "min_amount", "max_amount"}


class ConfigError(ValueError):
    """The rules file is unreadable or invalid."""


@dataclass(frozen=True)
class Rule:
    account: str
    payee: re.Pattern[str] | None = None
    memo: re.Pattern[str] | None = None
    min_amount: Decimal | None = None
    max_amount: Decimal | None = None

    def matches(self, txn: Transaction) -> bool:
        if self.payee is not None and not self.payee.search(txn.payee):
            return False
        if self.memo is not None and not self.memo.search(txn.memo):
            return False
        amount = abs(txn.amount)
        if self.min_amount is not None and amount < self.min_amount:
            return False
        if self.max_amount is not None and amount > self.max_amount:
            return False
        return True


@dataclass(frozen=True)
class Rules:
    default_account: str
    rules: tuple[Rule, ...]

    def categorise(self, txn: Transaction) -> str:
        for rule in self.rules:
            if rule.matches(txn):
                return rule.account
        return self.default_account


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ConfigError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _position(doc: str, pos: int) -> tuple[int, int]:
    """Return the line and column of offset *pos* in *doc*."""
    line = doc.count("\n", 0, pos) + 1
    column = pos - doc.rfind("\n", 0, pos) - 1
    return line, column


def _compile(pattern: Any, where: str) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    if not isinstance(pattern, str):
        raise ConfigError(f"{where}: expected a string, got {type(pattern).__name__}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"{where}: invalid regular expression: {exc}") from None


def _rule(data: Any, where: str) -> Rule:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: a rule must be an object")
    unknown = set(data) - _RULE_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    if not isinstance(data.get("account"), str) or not data["account"]:
        raise ConfigError(f"{where}: 'account' is required")
    bounds = {}
    for key in ("min_amount", "max_amount"):
        if data.get(key) is not None:
            bounds[key] = Decimal(str(data[key]))
    return Rule(
        account=data["account"],
        payee=_compile(data.get("payee"), f"{where}.payee"),
        memo=_compile(data.get("memo"), f"{where}.memo"),
        **bounds,
    )


def parse_rules(text: str, source: str = "<rules>") -> Rules:
    """Parse the JSON text of a rules file; *source* is used in messages."""
    try:
        data = json.loads(text, object_pairs_hook=_reject_duplicates, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        line, column = _position(exc.doc, exc.pos)
        raise ConfigError(f"{source}:{line}:{column}: {exc.msg}") from None
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be an object")
    rules = data.get("rules", [])
    if not isinstance(rules, list):
        raise ConfigError(f"{source}: 'rules' must be a list")
    return Rules(
        default_account=data.get("default_account", "Expenses:Unsorted"),
        rules=tuple(_rule(item, f"{source}: rules[{i}]") for i, item in enumerate(rules)),
    )


def load_rules(path: str | Path) -> Rules:
    """Read and parse the rules file at *path*."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    return parse_rules(text, source=path.name)
'''),
    "ledgerlite/importer.py": _src(
r'''
"""Read a bank export and turn its rows into :class:`Transaction` objects.

The flow is:

1. :func:`ledgerlite.sniff.detect_format` works out encoding, delimiter
   and how many metadata lines sit above the header row.
2. The header row selects a :class:`~ledgerlite.profiles.Profile`
   (or the caller names one explicitly).
3. Every data row is mapped through the profile; rows that are not booked
   yet (pending card payments) are skipped, rows that cannot be parsed are
   collected as problems instead of aborting the whole import.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from . import profiles
from .amounts import AmountError, parse_amount, parse_date
from .models import Transaction
from .sniff import FileFormat, detect_format

log = logging.getLogger(__name__)

#: Rows whose every field is empty are dropped silently; rows with fewer
#: fields than this are reported as problems.
MIN_FIELDS = 3


class ImportFailed(Exception):
    """The file could not be imported at all (as opposed to single bad rows)."""


@dataclass
class Problem:
    """A row that was skipped, with the reason and the 1-based line number."""

    line: int
    reason: str
    raw: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass
class ImportResult:
    path: Path
    format: FileFormat
    profile: profiles.Profile
    transactions: list[Transaction] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    skipped_pending: int = 0

    @property
    def total(self):
        return sum((t.amount for t in self.transactions), start=parse_amount("0"))

    def summary(self) -> str:
        text = (
            f"{self.path.name}: {len(self.transactions)} transactions "
            f"({self.profile.name}, {self.format.encoding})"
        )
        if self.skipped_pending:
            text += f", {self.skipped_pending} pending skipped"
        if self.problems:
            text += f", {len(self.problems)} problems"
        return text


def _rows(fh: Iterable[str], fmt: FileFormat) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for every row after the preamble."""
    reader = csv.reader(fh, delimiter=fmt.delimiter, quotechar=fmt.quotechar)
    for row in reader:
        if reader.line_num <= fmt.skip_lines:
            continue
        yield reader.line_num, row


def _select_profile(header: list[str], name: str | None, path: Path) -> profiles.Profile:
    if name is not None:
        return profiles.by_name(name)
    profile = profiles.profile_for(header)
    if profile is None:
        raise ImportFailed(
            f"could not recognise the export format of {path.name}; header was: {header!r}"
        )
    return profile


def _transaction(record: dict[str, str], profile: profiles.Profile) -> Transaction:
    value_date = None
    if profile.value_date and record.get(profile.value_date):
        value_date = parse_date(record[profile.value_date])
    amount = record[profile.amount]
    if profile.debit_credit is not None:
        amount = f"{amount} {record.get(profile.debit_credit, '')}"
    currency = "EUR"
    if profile.currency and record.get(profile.currency):
        currency = record[profile.currency].strip()
    return Transaction(
        date=parse_date(record[profile.date]),
        value_date=value_date,
        payee=" ".join(record[profile.payee].split()),
        memo=" ".join(record[profile.memo].split()),
        amount=parse_amount(amount),
        currency=currency,
        counterparty_iban=(record.get(profile.iban or "", "") or "").replace(" ", ""),
        raw=record,
    )


def _is_pending(record: dict[str, str], profile: profiles.Profile) -> bool:
    if not profile.status:
        return False
    return record.get(profile.status, "") not in profile.booked_values


def import_file(
    path: str | Path,
    *,
    profile: str | None = None,
    fmt: FileFormat | None = None,
) -> ImportResult:
    """Import the bank export at *path*.

    *profile* forces a profile by name instead of matching the header, and
    *fmt* skips format detection (the CLI passes one when the user gives
    ``--encoding``/``--delimiter``).
    """
    path = Path(path)
    if fmt is None:
        fmt = detect_format(path)
    with fmt.open(path) as fh:
        rows = _rows(fh, fmt)
        header = next((row for _, row in rows if any(cell.strip() for cell in row)), None)
        if header is None:
            raise ImportFailed(f"{path.name} has no header row")
        header = [column.strip() for column in header]
        chosen = _select_profile(header, profile, path)
        result = ImportResult(path=path, format=fmt, profile=chosen)
        log.debug("%s: profile %s, header %s", path, chosen.name, header)
        for line, row in rows:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) < MIN_FIELDS:
                result.problems.append(Problem(line, f"only {len(row)} fields", row))
                continue
            record = dict(zip(header, row))
            if _is_pending(record, chosen):
                result.skipped_pending += 1
                continue
            try:
                txn = _transaction(record, chosen)
            except (AmountError, ValueError) as exc:
                result.problems.append(Problem(line, str(exc), row))
                continue
            result.transactions.append(txn)
    result.transactions.sort(key=lambda t: (t.date, t.payee))
    return result


def import_many(paths: Iterable[str | Path], *, profile: str | None = None) -> list[ImportResult]:
    """Import several exports, e.g. one per month, and drop duplicates.

    Consecutive monthly exports overlap by a few days around the cut-off;
    a transaction that appears in two files is kept only once.
    """
    results = [import_file(p, profile=profile) for p in paths]
    seen: set[tuple] = set()
    for result in results:
        unique = []
        for txn in result.transactions:
            key = (txn.date, txn.amount, txn.payee, txn.memo)
            if key in seen:
                continue
            seen.add(key)
            unique.append(txn)
        result.transactions = unique
    return results
'''),
    "ledgerlite/models.py": _src(
r'''
"""Plain data classes shared by the importer, the rules engine and the CLI."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal


@dataclass(frozen=True)
class Transaction:
    """One booked line of a bank statement.

    ``amount`` is signed from the account holder's point of view: money
    leaving the account is negative.
    """

    date: dt.date
    payee: str
    memo: str
    amount: Decimal
    currency: str = "EUR"
    value_date: dt.date | None = None
    counterparty_iban: str = ""
    raw: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_debit(self) -> bool:
        return self.amount < 0

    def ledger_lines(self, account: str, category: str) -> list[str]:
        """Render the transaction as a hledger/beancount-style entry."""
        header = f"{self.date:%Y-%m-%d} {self.payee}"
        if self.memo:
            header += f" | {self.memo}"
        width = 52
        return [
            header,
            f"    {category:<{width}}{-self.amount:>12} {self.currency}",
            f"    {account}",
        ]
'''),
    "ledgerlite/profiles.py": _src(
r'''
"""Column layouts of the bank exports ledgerlite understands.

A profile maps our field names to the column headers a bank uses.  The
importer picks the first profile whose required columns are all present
in the header row, so more specific profiles must come first.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    date: str
    payee: str
    memo: str
    amount: str
    value_date: str | None = None
    currency: str | None = None
    iban: str | None = None
    #: Column holding "S" (Soll, debit) or "H" (Haben, credit) when the
    #: amount column itself is unsigned.
    debit_credit: str | None = None
    #: Some exports list pending card payments; those rows are skipped.
    status: str | None = None
    booked_values: tuple[str, ...] = ()

    @property
    def signature(self) -> tuple[str, ...]:
        """Columns that identify the export.

        Date columns are called "Buchungstag" by half of the German banks,
        so only the distinctive columns take part in the match.
        """
        return (self.payee, self.memo, self.amount)

    def matches(self, header: list[str]) -> bool:
        columns = set(header)
        return all(name in columns for name in self.signature)


SPARKASSE_CAMT = Profile(
    name="sparkasse-camt",
    date="Buchungstag",
    value_date="Valutadatum",
    payee="Beguenstigter/Zahlungspflichtiger",
    memo="Verwendungszweck",
    amount="Betrag",
    currency="Waehrung",
    iban="Kontonummer/IBAN",
)

DKB_2023 = Profile(
    name="dkb-2023",
    date="Buchungsdatum",
    value_date="Wertstellung",
    payee="Zahlungsempfänger*in",
    memo="Verwendungszweck",
    amount="Betrag (€)",
    iban="IBAN",
    status="Status",
    booked_values=("Gebucht",),
)

VOLKSBANK_LEGACY = Profile(
    name="volksbank-legacy",
    date="Buchungstag",
    value_date="Valuta",
    payee="Empfänger/Zahlungspflichtiger",
    memo="Vorgang/Verwendungszweck",
    amount="Umsatz",
    currency="Währung",
    iban="IBAN",
    debit_credit="",  # the last column has a blank header
)

PROFILES: tuple[Profile, ...] = (SPARKASSE_CAMT, DKB_2023, VOLKSBANK_LEGACY)


def profile_for(header: list[str]) -> Profile | None:
    """Return the first profile that understands *header*, or ``None``."""
    for profile in PROFILES:
        if profile.matches(header):
            return profile
    return None


def by_name(name: str) -> Profile:
    for profile in PROFILES:
        if profile.name == name:
            return profile
    known = ", ".join(p.name for p in PROFILES)
    raise KeyError(f"unknown profile {name!r} (known: {known})")
'''),
    "ledgerlite/sniff.py": _src(
r'''
"""Detect the encoding and CSV dialect of bank export files.

Bank exports are a zoo.  The ones we see in practice are:

* UTF-8 with a byte order mark (anything that has been through Excel,
  and the Sparkasse "CSV-CAMT V2" export),
* plain UTF-8 (DKB since 2023, N26, most fintechs),
* Windows-1252 (older Volksbank and Postbank exports).

Detection only looks at the first ``SAMPLE_BYTES`` bytes so that importing
a ten-year statement does not read the whole file twice.
"""

from __future__ import annotations

import codecs
import csv
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

log = logging.getLogger(__name__)

#: Number of bytes inspected by :func:`detect_format`.
SAMPLE_BYTES = 8192

#: Encodings tried in order; the first one that decodes the sample wins.
#: cp1252 decodes almost any byte string, so it has to come last.
CANDIDATE_ENCODINGS = ("utf-8", "cp1252")

#: Delimiters the sniffer may choose from.  Restricting the set keeps
#: csv.Sniffer from settling on "." or " " for exports with few columns.
CANDIDATE_DELIMITERS = ";,\t|"

#: Only this many lines of the sample are given to csv.Sniffer; long
#: samples make its regular expressions slow without improving the guess.
SNIFF_LINES = 20


class SniffError(ValueError):
    """Raised when the format of an export cannot be determined."""


@dataclass(frozen=True)
class FileFormat:
    """Everything the importer needs to know to read an export."""

    encoding: str
    delimiter: str
    quotechar: str = '"'
    skip_lines: int = 0

    def open(self, path: str | Path) -> TextIO:
        """Open *path* as text, positioned at the start of the file."""
        return open(path, encoding=self.encoding, newline="")

    def describe(self) -> str:
        """One-line summary used by ``ledgerlite detect``."""
        delimiter = {"\t": "TAB", " ": "SPACE"}.get(self.delimiter, self.delimiter)
        parts = [f"encoding={self.encoding}", f"delimiter={delimiter}", f"quotechar={self.quotechar}"]
        if self.skip_lines:
            parts.append(f"skip_lines={self.skip_lines}")
        return " ".join(parts)


def read_sample(path: str | Path, size: int = SAMPLE_BYTES) -> bytes:
    """Return the first *size* bytes of *path*."""
    with open(path, "rb") as fh:
        return fh.read(size)


def detect_encoding(raw: bytes) -> str:
    """Guess the text encoding of *raw*, the first bytes of an export."""
    if raw.startswith(codecs.BOM_UTF8):
        return "utf-8"
    for encoding in CANDIDATE_ENCODINGS:
        try:
            raw.decode(encoding)
        except UnicodeDecodeError as exc:
            log.debug("sample is not %s: %s", encoding, exc)
            continue
        return encoding
    raise SniffError("could not determine the encoding (tried %s)" % ", ".join(CANDIDATE_ENCODINGS))


def count_preamble(lines: list[str], delimiter: str, quotechar: str = '"') -> int:
    """Count the metadata lines above the header row.

    Some banks put the account number, the statement period and the
    balance above the table, e.g. ``"Kontostand vom 31.03.2024:";"2.184,17 €"``.
    The header is the first line with at least three fields that has as
    many fields as the line below it.
    """
    reader = csv.reader(lines, delimiter=delimiter, quotechar=quotechar)
    widths = [len(row) for row in reader]
    for index in range(len(widths) - 1):
        if widths[index] >= 3 and widths[index] == widths[index + 1]:
            return index
    return 0


def detect_dialect(text: str) -> tuple[str, str, int]:
    """Return ``(delimiter, quotechar, skip_lines)`` for a decoded sample."""
    lines = text.splitlines()
    if not lines or not any(line.strip() for line in lines):
        raise SniffError("the sample is empty")
    head = lines[:SNIFF_LINES]
    try:
        dialect = csv.Sniffer().sniff("\n".join(head), delimiters=CANDIDATE_DELIMITERS)
    except csv.Error as exc:
        raise SniffError(f"could not determine the delimiter: {exc}") from exc
    skip = count_preamble(head, dialect.delimiter, dialect.quotechar)
    return dialect.delimiter, dialect.quotechar, skip


def detect_format(path: str | Path) -> FileFormat:
    """Inspect the beginning of *path* and return its :class:`FileFormat`."""
    raw = read_sample(path)
    if not raw:
        raise SniffError(f"{path} is empty")
    encoding = detect_encoding(raw)
    text = raw.decode(encoding)
    delimiter, quotechar, skip = detect_dialect(text)
    fmt = FileFormat(encoding=encoding, delimiter=delimiter, quotechar=quotechar, skip_lines=skip)
    log.debug("%s: %s", path, fmt.describe())
    return fmt
'''),
    "tests/conftest.py": _src(
r'''
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def write_bytes(tmp_path):
    """Write *data* to a file in tmp_path and return its path."""

    def _write(name: str, data: bytes) -> Path:
        path = tmp_path / name
        path.write_bytes(data)
        return path

    return _write
'''),
    "tests/fixtures/rules.json": _src(
r'''
{
  "default_account": "Expenses:Unsorted",
  "rules": [
    {"account": "Income:Salary", "memo": "LOHN/GEHALT", "min_amount": 1000},
    {"account": "Expenses:Housing:Rent", "payee": "Hausverwaltung"},
    {"account": "Expenses:Housing:Utilities", "payee": "Stadtwerke|Vodafone"},
    {"account": "Expenses:Food:Coffee", "payee": "(?i)caf[eé]"},
    {"account": "Expenses:Food:Groceries", "payee": "REWE|EDEKA|Bäckerei"},
    {"account": "Expenses:Health", "payee": "Apotheke|Krankenkasse"},
    {"account": "Expenses:Transport:Fuel", "payee": "ARAL"},
    {"account": "Expenses:Subscriptions", "payee": "Spotify"},
    {"account": "Expenses:Household", "payee": "dm-drogerie|Bücherstube", "max_amount": 100}
  ]
}
'''),
    "tests/test_amounts.py": _src(
r'''
import datetime as dt
from decimal import Decimal

import pytest

from ledgerlite.amounts import AmountError, format_amount, parse_amount, parse_date


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0,00", "0.00"),
        ("12,5", "12.50"),
        ("-12,50", "-12.50"),
        ("+12,50", "12.50"),
        ("1.234,56", "1234.56"),
        ("-1.234,56", "-1234.56"),
        ("1 234,56", "1234.56"),
        ("1\u202f234,56", "1234.56"),
        ("12.345.678,90", "12345678.90"),
        ("\u221212,50", "-12.50"),
        ("12,50 €", "12.50"),
        ("12,50 EUR", "12.50"),
        ("12,50-", "-12.50"),
        ("12,50 S", "-12.50"),
        ("12,50 H", "12.50"),
        ("  7  ", "7.00"),
        ("890", "890.00"),
    ],
)
def test_parse_amount(text, expected):
    assert parse_amount(text) == Decimal(expected)


@pytest.mark.parametrize("text", ["", "abc", "12,345", "1.23,45", "--1,00", "12,50 USD", "zwölf"])
def test_parse_amount_rejects(text):
    with pytest.raises(AmountError):
        parse_amount(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("02.05.2024", dt.date(2024, 5, 2)),
        ("02.05.24", dt.date(2024, 5, 2)),
        ("2024-05-02", dt.date(2024, 5, 2)),
        (" 31.12.23 ", dt.date(2023, 12, 31)),
    ],
)
def test_parse_date(text, expected):
    assert parse_date(text) == expected


@pytest.mark.parametrize("text", ["2.5.", "31.02.2024", "05/02/2024"])
def test_parse_date_rejects(text):
    with pytest.raises(ValueError):
        parse_date(text)


@pytest.mark.parametrize(
    "value, expected",
    [("0", "0,00"), ("-3.2", "-3,20"), ("1234.56", "1.234,56"), ("-1234567.8", "-1.234.567,80")],
)
def test_format_amount(value, expected):
    assert format_amount(Decimal(value)) == expected
'''),
    "tests/test_cli.py": _src(
r'''
from ledgerlite import __version__
from ledgerlite.cli import main


def test_version(capsys):
    try:
        main(["--version"])
    except SystemExit as exc:
        assert exc.code == 0
    assert capsys.readouterr().out.strip() == f"ledgerlite {__version__}"


def test_detect(fixtures, capsys):
    assert main(["detect", str(fixtures / "dkb_2024_03.csv")]) == 0
    out = capsys.readouterr().out
    assert out.endswith('dkb_2024_03.csv: encoding=utf-8 delimiter=; quotechar=" skip_lines=4\n')


def test_detect_missing_file(tmp_path, capsys):
    assert main(["detect", str(tmp_path / "nope.csv")]) == 1
    assert "No such file or directory" in capsys.readouterr().err


def test_import_writes_ledger(fixtures, capsys):
    assert main(["import", str(fixtures / "dkb_2024_03.csv"), "--rules", str(fixtures / "rules.json")]) == 0
    captured = capsys.readouterr()
    assert "Expenses:Food:Coffee" in captured.out
    assert "dkb_2024_03.csv: 42 transactions (dkb-2023, utf-8)" in captured.err


def test_import_with_encoding_override(fixtures, capsys):
    path = fixtures / "volksbank_2019_cp1252.csv"
    assert main(["import", str(path), "--encoding", "cp1252"]) == 0
    assert "(volksbank-legacy, cp1252)" in capsys.readouterr().err


def test_check_rules(fixtures, capsys):
    assert main(["check-rules", str(fixtures / "rules.json")]) == 0
    assert "9 rules" in capsys.readouterr().out


def test_check_rules_reports_errors(tmp_path, capsys):
    path = tmp_path / "rules.json"
    path.write_text('{"rules": [}', encoding="utf-8")
    assert main(["check-rules", str(path)]) == 2
    assert capsys.readouterr().err.startswith("ledgerlite: error: rules.json:1:")
'''),
    "tests/test_config.py": _src(
r'''
import datetime as dt
from decimal import Decimal

import pytest

from ledgerlite.config import ConfigError, load_rules, parse_rules
from ledgerlite.models import Transaction


def txn(payee="REWE Markt GmbH", memo="VISA Debitkartenumsatz", amount="-23.17"):
    return Transaction(date=dt.date(2024, 5, 2), payee=payee, memo=memo, amount=Decimal(amount))


def test_minimal_file():
    rules = parse_rules('{"rules": []}')
    assert rules.rules == ()
    assert rules.default_account == "Expenses:Unsorted"


def test_fixture_rules(fixtures):
    rules = load_rules(fixtures / "rules.json")
    assert len(rules.rules) == 9
    assert rules.categorise(txn(payee="Café Müller")) == "Expenses:Food:Coffee"
    assert rules.categorise(txn(payee="Nordlicht Software GmbH", memo="LOHN/GEHALT 05/24", amount="3412.55")) == (
        "Income:Salary"
    )
    assert rules.categorise(txn(payee="Unbekannt")) == "Expenses:Unsorted"


def test_first_matching_rule_wins():
    rules = parse_rules(
        '{"rules": [{"account": "A", "payee": "REWE"}, {"account": "B", "payee": "REWE"}]}'
    )
    assert rules.categorise(txn()) == "A"


@pytest.mark.parametrize(
    "amount, expected",
    [("-5.00", "Expenses:Small"), ("-50.00", "Expenses:Unsorted"), ("-500.00", "Expenses:Large")],
)
def test_amount_bounds(amount, expected):
    rules = parse_rules(
        '{"rules": [{"account": "Expenses:Small", "max_amount": 10},'
        ' {"account": "Expenses:Large", "min_amount": 100.00}]}'
    )
    assert rules.categorise(txn(amount=amount)) == expected


def test_memo_pattern():
    rules = parse_rules('{"rules": [{"account": "Expenses:Travel", "memo": "(?i)fahrkarte"}]}')
    assert rules.categorise(txn(payee="DB Fernverkehr AG", memo="Fahrkarte 4471092235")) == "Expenses:Travel"


def test_syntax_error_reports_line_and_column():
    text = '{\n  "rules": [\n    {"account": "Expenses:Food", }\n  ]\n}\n'
    with pytest.raises(ConfigError) as excinfo:
        parse_rules(text, source="rules.json")
    assert str(excinfo.value) == "rules.json:3:34: Expecting property name enclosed in double quotes"


def test_syntax_error_on_first_line():
    with pytest.raises(ConfigError) as excinfo:
        parse_rules('{"rules": [1, 2,, 3]}', source="rules.json")
    assert str(excinfo.value) == "rules.json:1:17: Expecting value"


def test_duplicate_keys():
    with pytest.raises(ConfigError, match="rules.json: duplicate key 'account'"):
        parse_rules('{"rules": [{"account": "A", "account": "B"}]}', source="rules.json")


def test_unknown_rule_key():
    with pytest.raises(ConfigError, match=r"rules\[0\]: unknown key\(s\) category"):
        parse_rules('{"rules": [{"account": "A", "category": "B"}]}')


def test_invalid_regex():
    with pytest.raises(ConfigError, match=r"rules\[1\].payee: invalid regular expression"):
        parse_rules('{"rules": [{"account": "A"}, {"account": "B", "payee": "("}]}')


def test_missing_account():
    with pytest.raises(ConfigError, match="'account' is required"):
        parse_rules('{"rules": [{"payee": "REWE"}]}')


def test_top_level_must_be_object():
    with pytest.raises(ConfigError, match="top level must be an object"):
        parse_rules("[]")


def test_unreadable_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_rules(tmp_path / "missing.json")
'''),
    "tests/test_importer.py": _src(
r'''
import datetime as dt
from decimal import Decimal

import pytest

from ledgerlite.importer import ImportFailed, import_file, import_many
from ledgerlite.sniff import SAMPLE_BYTES, FileFormat

FIXTURE_COUNTS = {
    "sparkasse_2024_05_bom.csv": ("sparkasse-camt", 50),
    "dkb_2024_03.csv": ("dkb-2023", 42),
    "dkb_2024.csv": ("dkb-2023", 455),
    "volksbank_2019_cp1252.csv": ("volksbank-legacy", 45),
}


@pytest.mark.parametrize("name", sorted(FIXTURE_COUNTS))
def test_import_fixture(fixtures, name):
    profile, count = FIXTURE_COUNTS[name]
    result = import_file(fixtures / name)
    assert result.profile.name == profile
    assert len(result.transactions) == count
    assert result.problems == []


def test_sparkasse_rent_row(fixtures):
    result = import_file(fixtures / "sparkasse_2024_05_bom.csv")
    rent = next(t for t in result.transactions if t.memo.startswith("Miete"))
    assert rent.date == dt.date(2024, 5, 1)
    assert rent.payee == "Hausverwaltung Böttcher & Söhne"
    assert rent.amount == Decimal("-890.00")
    assert rent.currency == "EUR"


def test_payees_survive_the_sample_boundary(fixtures):
    path = fixtures / "dkb_2024.csv"
    assert path.stat().st_size > SAMPLE_BYTES
    result = import_file(path)
    payees = {t.payee for t in result.transactions}
    assert "Café Müller" in payees
    assert not any("Ã" in p for p in payees)


def test_pending_rows_are_skipped(write_bytes):
    data = (
        '"Buchungsdatum";"Wertstellung";"Status";"Zahlungspflichtige*r";"Zahlungsempfänger*in";'
        '"Verwendungszweck";"Umsatztyp";"IBAN";"Betrag (€)";"Gläubiger-ID";"Mandatsreferenz";"Kundenreferenz"\n'
        '"03.04.24";"03.04.24";"Vorgemerkt";"Jonas Weber";"REWE Markt GmbH";"VISA Debitkartenumsatz";'
        '"Ausgang";"";"-23,17";"";"";""\n'
        '"02.04.24";"02.04.24";"Gebucht";"Jonas Weber";"Bäckerei Kröger";"VISA Debitkartenumsatz";'
        '"Ausgang";"";"-3,20";"";"";""\n'
    )
    result = import_file(write_bytes("pending.csv", data.encode("utf-8")))
    assert result.skipped_pending == 1
    assert [t.payee for t in result.transactions] == ["Bäckerei Kröger"]


def test_short_rows_are_reported(write_bytes):
    data = (
        '"Buchungstag";"Valutadatum";"Buchungstext";"Verwendungszweck";'
        '"Beguenstigter/Zahlungspflichtiger";"Betrag";"Waehrung"\n'
        '"02.05.24";"02.05.24";"LASTSCHRIFT";"Abschlag";"Stadtwerke";"-112,00";"EUR"\n'
        '"03.05.24";"03.05.24"\n'
    )
    result = import_file(write_bytes("short.csv", data.encode("utf-8")))
    assert len(result.transactions) == 1
    assert [str(p) for p in result.problems] == ["line 3: only 2 fields"]


def test_bad_amount_is_reported_not_fatal(write_bytes):
    data = (
        '"Buchungstag";"Valutadatum";"Buchungstext";"Verwendungszweck";'
        '"Beguenstigter/Zahlungspflichtiger";"Betrag";"Waehrung"\n'
        '"02.05.24";"02.05.24";"LASTSCHRIFT";"Abschlag";"Stadtwerke";"zwölf";"EUR"\n'
    )
    result = import_file(write_bytes("bad.csv", data.encode("utf-8")))
    assert result.transactions == []
    assert result.problems[0].reason == "not an amount: 'zwölf'"


def test_unknown_header(write_bytes):
    path = write_bytes("unknown.csv", b"Date,Description,Amount\n2024-05-02,Coffee,-3.20\n")
    with pytest.raises(ImportFailed, match="could not recognise the export format of unknown.csv"):
        import_file(path)


def test_forced_profile(write_bytes):
    data = '"Buchungstag";"Valutadatum";"Verwendungszweck";"Beguenstigter/Zahlungspflichtiger";"Betrag"\n'
    data += '"02.05.24";"02.05.24";"Abschlag";"Stadtwerke";"-112,00"\n'
    result = import_file(write_bytes("forced.csv", data.encode("utf-8")), profile="sparkasse-camt")
    assert result.transactions[0].amount == Decimal("-112.00")


def test_explicit_format_skips_detection(write_bytes):
    data = "Buchungstag|Valutadatum|Verwendungszweck|Beguenstigter/Zahlungspflichtiger|Betrag\n"
    data += "02.05.24|02.05.24|Abschlag|Stadtwerke|-112,00\n"
    fmt = FileFormat(encoding="utf-8", delimiter="|", quotechar='"')
    result = import_file(write_bytes("pipes.csv", data.encode("utf-8")), fmt=fmt)
    assert len(result.transactions) == 1


def test_empty_file_after_preamble(write_bytes):
    with pytest.raises(ImportFailed, match="has no header row"):
        import_file(write_bytes("blank.csv", b"\n\n\n"), fmt=FileFormat("utf-8", ";"))


def test_import_many_drops_overlap(fixtures):
    march, year = import_many([fixtures / "dkb_2024_03.csv", fixtures / "dkb_2024.csv"])
    assert len(march.transactions) == 42
    assert not {(t.date, t.amount, t.payee) for t in march.transactions} & {
        (t.date, t.amount, t.payee) for t in year.transactions
    }


def test_summary_mentions_encoding(fixtures):
    result = import_file(fixtures / "sparkasse_2024_05_bom.csv")
    assert result.summary() == "sparkasse_2024_05_bom.csv: 50 transactions (sparkasse-camt, utf-8-sig)"
'''),
    "tests/test_profiles.py": _src(
r'''
import pytest

from ledgerlite import profiles


def test_profile_for_sparkasse():
    header = ["Buchungstag", "Valutadatum", "Verwendungszweck", "Beguenstigter/Zahlungspflichtiger", "Betrag"]
    assert profiles.profile_for(header) is profiles.SPARKASSE_CAMT


def test_profile_for_dkb():
    header = ["Buchungsdatum", "Status", "Zahlungsempfänger*in", "Verwendungszweck", "Betrag (€)"]
    assert profiles.profile_for(header) is profiles.DKB_2023


def test_profile_for_volksbank():
    header = ["Buchungstag", "Valuta", "Empfänger/Zahlungspflichtiger", "Vorgang/Verwendungszweck", "Umsatz"]
    assert profiles.profile_for(header) is profiles.VOLKSBANK_LEGACY


def test_profile_for_unknown():
    assert profiles.profile_for(["Date", "Description", "Amount"]) is None


def test_signature_ignores_date_column():
    header = ["Datum", "Verwendungszweck", "Beguenstigter/Zahlungspflichtiger", "Betrag"]
    assert profiles.profile_for(header) is profiles.SPARKASSE_CAMT


@pytest.mark.parametrize("name", ["sparkasse-camt", "dkb-2023", "volksbank-legacy"])
def test_by_name(name):
    assert profiles.by_name(name).name == name


def test_by_name_unknown():
    with pytest.raises(KeyError, match="known: sparkasse-camt, dkb-2023, volksbank-legacy"):
        profiles.by_name("n26")


def test_dkb_pending_status():
    assert profiles.DKB_2023.booked_values == ("Gebucht",)
'''),
    "tests/test_sniff.py": _src(
r'''
import codecs

import pytest

from ledgerlite.sniff import (
    SAMPLE_BYTES,
    FileFormat,
    SniffError,
    count_preamble,
    detect_dialect,
    detect_encoding,
    detect_format,
)

HEADER = '"Buchungstag";"Valutadatum";"Buchungstext";"Verwendungszweck";"Betrag"'
ROW = '"02.05.24";"02.05.24";"KARTENZAHLUNG";"Café Müller Lüneburg";"-4,80"'


class TestDetectEncoding:
    def test_ascii_is_utf8(self):
        assert detect_encoding(b"a;b;c\n1;2;3\n") == "utf-8"

    def test_utf8_umlauts(self):
        assert detect_encoding(ROW.encode("utf-8")) == "utf-8"

    def test_utf8_with_bom(self):
        raw = codecs.BOM_UTF8 + f"{HEADER}\n{ROW}\n".encode("utf-8")
        assert detect_encoding(raw) == "utf-8-sig"

    def test_cp1252_fallback(self):
        assert detect_encoding(ROW.encode("cp1252")) == "cp1252"

    def test_undecodable_sample(self):
        # 0x81 and 0x8d are unassigned in cp1252 and invalid as UTF-8 lead bytes
        with pytest.raises(SniffError, match="could not determine the encoding"):
            detect_encoding(b"\x81\x8d;\x81\x8d\n")

    @pytest.mark.parametrize("char", ["é", "€", "→"], ids=["two-byte", "three-byte-euro", "three-byte-arrow"])
    def test_multibyte_char_cut_by_sample(self, char):
        data = ("a" * (SAMPLE_BYTES - 1) + char).encode("utf-8")
        raw = data[:SAMPLE_BYTES]
        assert len(raw) == SAMPLE_BYTES
        assert detect_encoding(raw) == "utf-8"


class TestDetectDialect:
    def test_semicolon_quoted(self):
        assert detect_dialect(f"{HEADER}\n{ROW}\n") == (";", '"', 0)

    def test_comma_unquoted(self):
        text = "date,payee,amount\n2024-05-02,Bakery,-3.20\n2024-05-03,Rent,-890.00\n"
        delimiter, _, skip = detect_dialect(text)
        assert (delimiter, skip) == (",", 0)

    def test_tab_separated(self):
        text = "Datum\tEmpfänger\tBetrag\n02.05.2024\tBäckerei\t-3,20\n03.05.2024\tMiete\t-890,00\n"
        assert detect_dialect(text)[0] == "\t"

    def test_preamble_is_counted(self):
        text = (
            '"Girokonto";"DE27 1203 0000 1020 4471 33"\n""\n'
            '"Kontostand vom 31.03.2024:";"2.184,17 €"\n""\n'
            f"{HEADER}\n{ROW}\n{ROW}\n"
        )
        assert detect_dialect(text) == (";", '"', 4)

    def test_empty_sample(self):
        with pytest.raises(SniffError, match="empty"):
            detect_dialect("\n\n")

    def test_header_only(self):
        assert detect_dialect(HEADER)[0] == ";"


def test_count_preamble_without_preamble():
    assert count_preamble([HEADER, ROW, ROW], ";") == 0


def test_describe_uses_names_for_invisible_delimiters():
    fmt = FileFormat(encoding="utf-8", delimiter="\t")
    assert fmt.describe() == 'encoding=utf-8 delimiter=TAB quotechar="'


class TestDetectFormat:
    def test_bom_file(self, write_bytes):
        path = write_bytes("bom.csv", codecs.BOM_UTF8 + f"{HEADER}\n{ROW}\n".encode("utf-8"))
        assert detect_format(path) == FileFormat("utf-8-sig", ";", '"', 0)

    def test_cp1252_file(self, write_bytes):
        path = write_bytes("old.csv", f"{HEADER}\n{ROW}\n".encode("cp1252"))
        assert detect_format(path).encoding == "cp1252"

    def test_header_only_without_trailing_newline(self, write_bytes):
        path = write_bytes("header.csv", HEADER.encode("utf-8"))
        assert detect_format(path) == FileFormat("utf-8", ";", '"', 0)

    def test_large_file_with_multibyte_char_at_sample_boundary(self, write_bytes):
        head = f"{HEADER}\n".encode("utf-8")
        filler = b'"01.05.24";"01.05.24";"LASTSCHRIFT";"Stadtwerke";"-1,00"\n'
        data = head + filler * ((SAMPLE_BYTES - len(head)) // len(filler) - 1)
        # pad so that the two bytes of "é" in ROW sit on both sides of the cut
        pad = SAMPLE_BYTES - len(data) - ROW.encode("utf-8").index("é".encode("utf-8")) - 1
        data += b" " * pad + (ROW + "\n").encode("utf-8") * 3
        assert data[SAMPLE_BYTES - 1 : SAMPLE_BYTES + 1] == "é".encode("utf-8")
        path = write_bytes("large.csv", data)
        assert detect_format(path).encoding == "utf-8"

    def test_empty_file(self, write_bytes):
        with pytest.raises(SniffError, match="is empty"):
            detect_format(write_bytes("empty.csv", b""))

    def test_fixture_dkb_march(self, fixtures):
        fmt = detect_format(fixtures / "dkb_2024_03.csv")
        assert fmt == FileFormat("utf-8", ";", '"', 4)

    def test_fixture_volksbank(self, fixtures):
        assert detect_format(fixtures / "volksbank_2019_cp1252.csv").encoding == "cp1252"
'''),
}

#: The edits the agent makes, in order: (path, old text, new text).
EDIT_BOM = ("ledgerlite/sniff.py", '''    if raw.startswith(codecs.BOM_UTF8):
        return "utf-8"
''', '''    if raw.startswith(codecs.BOM_UTF8):
        # "utf-8-sig" strips the BOM when decoding; plain "utf-8" keeps it as
        # U+FEFF glued to the first header cell ("\\ufeffBuchungstag").
        return "utf-8-sig"
''')
EDIT_TRIM = ("ledgerlite/sniff.py", '''        raise SniffError(f"{path} is empty")
    encoding = detect_encoding(raw)
''', '''        raise SniffError(f"{path} is empty")
    # The sample usually ends in the middle of a line, possibly in the middle
    # of a multi-byte character: only look at complete lines.
    raw = raw[: raw.rfind(b"\\n") + 1]
    encoding = detect_encoding(raw)
''')
EDIT_DECODE = ("ledgerlite/sniff.py", '''def detect_encoding(raw: bytes) -> str:
    """Guess the text encoding of *raw*, the first bytes of an export."""
''', '''def decode_sample(raw: bytes, encoding: str, *, final: bool = False) -> str:
    """Decode *raw*, the first bytes of a file, with *encoding*.

    The sample is cut at an arbitrary byte offset, which can fall inside a
    multi-byte UTF-8 sequence.  An incremental decoder holds such an
    incomplete sequence back instead of failing, exactly as io.TextIOWrapper
    does between chunks.  Pass ``final=True`` when *raw* is the whole file,
    so that a truncated sequence at its end is still an error.
    """
    decoder = codecs.getincrementaldecoder(encoding)()
    return decoder.decode(raw, final=final)


def detect_encoding(raw: bytes, *, final: bool = False) -> str:
    """Guess the text encoding of *raw*, the first bytes of an export.

    *final* tells whether *raw* is the complete file (see decode_sample).
    """
''')
EDIT_TRY = ("ledgerlite/sniff.py", '''            raw.decode(encoding)
''', '''            decode_sample(raw, encoding, final=final)
''')
EDIT_FORMAT = ("ledgerlite/sniff.py", '''    # The sample usually ends in the middle of a line, possibly in the middle
    # of a multi-byte character: only look at complete lines.
    raw = raw[: raw.rfind(b"\\n") + 1]
    encoding = detect_encoding(raw)
    text = raw.decode(encoding)
''', '''    final = len(raw) < SAMPLE_BYTES  # we have read the whole file
    encoding = detect_encoding(raw, final=final)
    text = decode_sample(raw, encoding, final=final)
''')
EDIT_TEST = ("tests/test_sniff.py", '''        assert detect_encoding(raw) == "utf-8"


class TestDetectDialect:''', '''        assert detect_encoding(raw) == "utf-8"

    def test_truncated_sequence_at_end_of_whole_file(self):
        # b"Caf\\xc3" is not valid UTF-8 if nothing follows, but is valid cp1252
        raw = "Café".encode("utf-8")[:-1]
        assert detect_encoding(raw, final=True) == "cp1252"
        assert detect_encoding(raw) == "utf-8"


class TestDetectDialect:''')
EDIT_CONFIG_USE = ("ledgerlite/config.py", '''        line, column = _position(exc.doc, exc.pos)
        raise ConfigError(f"{source}:{line}:{column}: {exc.msg}") from None
''', '''        # JSONDecodeError already knows the 1-based line and column.
        raise ConfigError(f"{source}:{exc.lineno}:{exc.colno}: {exc.msg}") from None
''')
EDIT_CONFIG_DEL = ("ledgerlite/config.py", '''def _position(doc: str, pos: int) -> tuple[int, int]:
    """Return the line and column of offset *pos* in *doc*."""
    line = doc.count("\\n", 0, pos) + 1
    column = pos - doc.rfind("\\n", 0, pos) - 1
    return line, column


''', '')


#: Test ids in collection order (after the agent adds its regression test).
LEDGERLITE_TESTS: dict[str, list[str]] = {
    "tests/test_amounts.py": [
        'test_parse_amount[0,00-0.00]',
        'test_parse_amount[12,5-12.50]',
        'test_parse_amount[-12,50--12.50]',
        'test_parse_amount[+12,50-12.50]',
        'test_parse_amount[1.234,56-1234.56]',
        'test_parse_amount[-1.234,56--1234.56]',
        'test_parse_amount[1 234,56-1234.56]',
        'test_parse_amount[1\\u202f234,56-1234.56]',
        'test_parse_amount[12.345.678,90-12345678.90]',
        'test_parse_amount[\\u221212,50--12.50]',
        'test_parse_amount[12,50 \\u20ac-12.50]',
        'test_parse_amount[12,50 EUR-12.50]',
        'test_parse_amount[12,50---12.50]',
        'test_parse_amount[12,50 S--12.50]',
        'test_parse_amount[12,50 H-12.50]',
        'test_parse_amount[  7  -7.00]',
        'test_parse_amount[890-890.00]',
        'test_parse_amount_rejects[]',
        'test_parse_amount_rejects[abc]',
        'test_parse_amount_rejects[12,345]',
        'test_parse_amount_rejects[1.23,45]',
        'test_parse_amount_rejects[--1,00]',
        'test_parse_amount_rejects[12,50 USD]',
        'test_parse_amount_rejects[zw\\xf6lf]',
        'test_parse_date[02.05.2024-expected0]',
        'test_parse_date[02.05.24-expected1]',
        'test_parse_date[2024-05-02-expected2]',
        'test_parse_date[ 31.12.23 -expected3]',
        'test_parse_date_rejects[2.5.]',
        'test_parse_date_rejects[31.02.2024]',
        'test_parse_date_rejects[05/02/2024]',
        'test_format_amount[0-0,00]',
        'test_format_amount[-3.2--3,20]',
        'test_format_amount[1234.56-1.234,56]',
        'test_format_amount[-1234567.8--1.234.567,80]',
    ],
    "tests/test_cli.py": [
        'test_version',
        'test_detect',
        'test_detect_missing_file',
        'test_import_writes_ledger',
        'test_import_with_encoding_override',
        'test_check_rules',
        'test_check_rules_reports_errors',
    ],
    "tests/test_config.py": [
        'test_minimal_file',
        'test_fixture_rules',
        'test_first_matching_rule_wins',
        'test_amount_bounds[-5.00-Expenses:Small]',
        'test_amount_bounds[-50.00-Expenses:Unsorted]',
        'test_amount_bounds[-500.00-Expenses:Large]',
        'test_memo_pattern',
        'test_syntax_error_reports_line_and_column',
        'test_syntax_error_on_first_line',
        'test_duplicate_keys',
        'test_unknown_rule_key',
        'test_invalid_regex',
        'test_missing_account',
        'test_top_level_must_be_object',
        'test_unreadable_file',
    ],
    "tests/test_importer.py": [
        'test_import_fixture[dkb_2024.csv]',
        'test_import_fixture[dkb_2024_03.csv]',
        'test_import_fixture[sparkasse_2024_05_bom.csv]',
        'test_import_fixture[volksbank_2019_cp1252.csv]',
        'test_sparkasse_rent_row',
        'test_payees_survive_the_sample_boundary',
        'test_pending_rows_are_skipped',
        'test_short_rows_are_reported',
        'test_bad_amount_is_reported_not_fatal',
        'test_unknown_header',
        'test_forced_profile',
        'test_explicit_format_skips_detection',
        'test_empty_file_after_preamble',
        'test_import_many_drops_overlap',
        'test_summary_mentions_encoding',
    ],
    "tests/test_profiles.py": [
        'test_profile_for_sparkasse',
        'test_profile_for_dkb',
        'test_profile_for_volksbank',
        'test_profile_for_unknown',
        'test_signature_ignores_date_column',
        'test_by_name[sparkasse-camt]',
        'test_by_name[dkb-2023]',
        'test_by_name[volksbank-legacy]',
        'test_by_name_unknown',
        'test_dkb_pending_status',
    ],
    "tests/test_sniff.py": [
        'TestDetectEncoding::test_ascii_is_utf8',
        'TestDetectEncoding::test_utf8_umlauts',
        'TestDetectEncoding::test_utf8_with_bom',
        'TestDetectEncoding::test_cp1252_fallback',
        'TestDetectEncoding::test_undecodable_sample',
        'TestDetectEncoding::test_multibyte_char_cut_by_sample[two-byte]',
        'TestDetectEncoding::test_multibyte_char_cut_by_sample[three-byte-euro]',
        'TestDetectEncoding::test_multibyte_char_cut_by_sample[three-byte-arrow]',
        'TestDetectEncoding::test_truncated_sequence_at_end_of_whole_file',
        'TestDetectDialect::test_semicolon_quoted',
        'TestDetectDialect::test_comma_unquoted',
        'TestDetectDialect::test_tab_separated',
        'TestDetectDialect::test_preamble_is_counted',
        'TestDetectDialect::test_empty_sample',
        'TestDetectDialect::test_header_only',
        'test_count_preamble_without_preamble',
        'test_describe_uses_names_for_invisible_delimiters',
        'TestDetectFormat::test_bom_file',
        'TestDetectFormat::test_cp1252_file',
        'TestDetectFormat::test_header_only_without_trailing_newline',
        'TestDetectFormat::test_large_file_with_multibyte_char_at_sample_boundary',
        'TestDetectFormat::test_empty_file',
        'TestDetectFormat::test_fixture_dkb_march',
        'TestDetectFormat::test_fixture_volksbank',
    ],
}

#: The "FAILURES" sections of the three runs that fail, captured from real
#: pytest runs of the project above (paths rewritten to /workspace).
PYTEST_FAILURES: dict[str, str] = {
    "r1_full": _src(
r'''
__________________ test_syntax_error_reports_line_and_column ___________________

    def test_syntax_error_reports_line_and_column():
        text = '{\n  "rules": [\n    {"account": "Expenses:Food", }\n  ]\n}\n'
        with pytest.raises(ConfigError) as excinfo:
            parse_rules(text, source="rules.json")
>       assert str(excinfo.value) == "rules.json:3:34: Expecting property name enclosed in double quotes"
E       AssertionError: assert 'rules.json:3...double quotes' == 'rules.json:3...double quotes'
E         
E         Skipping 42 identical trailing characters in diff, use -v to show
E         - rules.json:3:34: Expecti
E         ?               ^
E         + rules.json:3:33: Expecti
E         ?               ^

tests/test_config.py:58: AssertionError
_______________________ test_syntax_error_on_first_line ________________________

    def test_syntax_error_on_first_line():
        with pytest.raises(ConfigError) as excinfo:
            parse_rules('{"rules": [1, 2,, 3]}', source="rules.json")
>       assert str(excinfo.value) == "rules.json:1:17: Expecting value"
E       AssertionError: assert 'rules.json:1...pecting value' == 'rules.json:1...pecting value'
E         
E         - rules.json:1:17: Expecting value
E         ?               ^
E         + rules.json:1:16: Expecting value
E         ?               ^

tests/test_config.py:64: AssertionError
______________________ test_import_fixture[dkb_2024.csv] _______________________

fixtures = PosixPath('/workspace/ledgerlite/tests/fixtures')
name = 'dkb_2024.csv'

    @pytest.mark.parametrize("name", sorted(FIXTURE_COUNTS))
    def test_import_fixture(fixtures, name):
        profile, count = FIXTURE_COUNTS[name]
>       result = import_file(fixtures / name)
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^

tests/test_importer.py:20: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
ledgerlite/importer.py:144: in import_file
    chosen = _select_profile(header, profile, path)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

header = ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', ...]
name = None
path = PosixPath('/workspace/ledgerlite/tests/fixtures/dkb_2024.csv')

    def _select_profile(header: list[str], name: str | None, path: Path) -> profiles.Profile:
        if name is not None:
            return profiles.by_name(name)
        profile = profiles.profile_for(header)
        if profile is None:
>           raise ImportFailed(
                f"could not recognise the export format of {path.name}; header was: {header!r}"
            )
E           ledgerlite.importer.ImportFailed: could not recognise the export format of dkb_2024.csv; header was: ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', 'Umsatztyp', 'IBAN', 'Betrag (â‚¬)', 'GlÃ¤ubiger-ID', 'Mandatsreferenz', 'Kundenreferenz']

ledgerlite/importer.py:89: ImportFailed
________________ test_import_fixture[sparkasse_2024_05_bom.csv] ________________

fixtures = PosixPath('/workspace/ledgerlite/tests/fixtures')
name = 'sparkasse_2024_05_bom.csv'

    @pytest.mark.parametrize("name", sorted(FIXTURE_COUNTS))
    def test_import_fixture(fixtures, name):
        profile, count = FIXTURE_COUNTS[name]
>       result = import_file(fixtures / name)
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^

tests/test_importer.py:20: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
ledgerlite/importer.py:158: in import_file
    txn = _transaction(record, chosen)
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

record = {'BIC (SWIFT-Code)': '', 'Beguenstigter/Zahlungspflichtiger': 'Techniker Krankenkasse', 'Betrag': '-28,40', 'Buchungstext': 'FOLGELASTSCHRIFT', ...}
profile = Profile(name='sparkasse-camt', date='Buchungstag', payee='Beguenstigter/Zahlungspflichtiger', memo='Verwendungszweck',...lue_date='Valutadatum', currency='Waehrung', iban='Kontonummer/IBAN', debit_credit=None, status=None, booked_values=())

    def _transaction(record: dict[str, str], profile: profiles.Profile) -> Transaction:
        value_date = None
        if profile.value_date and record.get(profile.value_date):
            value_date = parse_date(record[profile.value_date])
        amount = record[profile.amount]
        if profile.debit_credit is not None:
            amount = f"{amount} {record.get(profile.debit_credit, '')}"
        currency = "EUR"
        if profile.currency and record.get(profile.currency):
            currency = record[profile.currency].strip()
        return Transaction(
>           date=parse_date(record[profile.date]),
                            ^^^^^^^^^^^^^^^^^^^^
            value_date=value_date,
            payee=" ".join(record[profile.payee].split()),
            memo=" ".join(record[profile.memo].split()),
            amount=parse_amount(amount),
            currency=currency,
            counterparty_iban=(record.get(profile.iban or "", "") or "").replace(" ", ""),
            raw=record,
        )
E       KeyError: 'Buchungstag'

ledgerlite/importer.py:106: KeyError
___________________________ test_sparkasse_rent_row ____________________________

fixtures = PosixPath('/workspace/ledgerlite/tests/fixtures')

    def test_sparkasse_rent_row(fixtures):
>       result = import_file(fixtures / "sparkasse_2024_05_bom.csv")
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

tests/test_importer.py:27: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
ledgerlite/importer.py:158: in import_file
    txn = _transaction(record, chosen)
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

record = {'BIC (SWIFT-Code)': '', 'Beguenstigter/Zahlungspflichtiger': 'Techniker Krankenkasse', 'Betrag': '-28,40', 'Buchungstext': 'FOLGELASTSCHRIFT', ...}
profile = Profile(name='sparkasse-camt', date='Buchungstag', payee='Beguenstigter/Zahlungspflichtiger', memo='Verwendungszweck',...lue_date='Valutadatum', currency='Waehrung', iban='Kontonummer/IBAN', debit_credit=None, status=None, booked_values=())

    def _transaction(record: dict[str, str], profile: profiles.Profile) -> Transaction:
        value_date = None
        if profile.value_date and record.get(profile.value_date):
            value_date = parse_date(record[profile.value_date])
        amount = record[profile.amount]
        if profile.debit_credit is not None:
            amount = f"{amount} {record.get(profile.debit_credit, '')}"
        currency = "EUR"
        if profile.currency and record.get(profile.currency):
            currency = record[profile.currency].strip()
        return Transaction(
>           date=parse_date(record[profile.date]),
                            ^^^^^^^^^^^^^^^^^^^^
            value_date=value_date,
            payee=" ".join(record[profile.payee].split()),
            memo=" ".join(record[profile.memo].split()),
            amount=parse_amount(amount),
            currency=currency,
            counterparty_iban=(record.get(profile.iban or "", "") or "").replace(" ", ""),
            raw=record,
        )
E       KeyError: 'Buchungstag'

ledgerlite/importer.py:106: KeyError
___________________ test_payees_survive_the_sample_boundary ____________________

fixtures = PosixPath('/workspace/ledgerlite/tests/fixtures')

    def test_payees_survive_the_sample_boundary(fixtures):
        path = fixtures / "dkb_2024.csv"
        assert path.stat().st_size > SAMPLE_BYTES
>       result = import_file(path)
                 ^^^^^^^^^^^^^^^^^

tests/test_importer.py:38: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
ledgerlite/importer.py:144: in import_file
    chosen = _select_profile(header, profile, path)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

header = ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', ...]
name = None
path = PosixPath('/workspace/ledgerlite/tests/fixtures/dkb_2024.csv')

    def _select_profile(header: list[str], name: str | None, path: Path) -> profiles.Profile:
        if name is not None:
            return profiles.by_name(name)
        profile = profiles.profile_for(header)
        if profile is None:
>           raise ImportFailed(
                f"could not recognise the export format of {path.name}; header was: {header!r}"
            )
E           ledgerlite.importer.ImportFailed: could not recognise the export format of dkb_2024.csv; header was: ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', 'Umsatztyp', 'IBAN', 'Betrag (â‚¬)', 'GlÃ¤ubiger-ID', 'Mandatsreferenz', 'Kundenreferenz']

ledgerlite/importer.py:89: ImportFailed
________________________ test_import_many_drops_overlap ________________________

fixtures = PosixPath('/workspace/ledgerlite/tests/fixtures')

    def test_import_many_drops_overlap(fixtures):
>       march, year = import_many([fixtures / "dkb_2024_03.csv", fixtures / "dkb_2024.csv"])
                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

tests/test_importer.py:108: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
ledgerlite/importer.py:173: in import_many
    results = [import_file(p, profile=profile) for p in paths]
              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ledgerlite/importer.py:173: in <listcomp>
    results = [import_file(p, profile=profile) for p in paths]
               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ledgerlite/importer.py:144: in import_file
    chosen = _select_profile(header, profile, path)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

header = ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', ...]
name = None
path = PosixPath('/workspace/ledgerlite/tests/fixtures/dkb_2024.csv')

    def _select_profile(header: list[str], name: str | None, path: Path) -> profiles.Profile:
        if name is not None:
            return profiles.by_name(name)
        profile = profiles.profile_for(header)
        if profile is None:
>           raise ImportFailed(
                f"could not recognise the export format of {path.name}; header was: {header!r}"
            )
E           ledgerlite.importer.ImportFailed: could not recognise the export format of dkb_2024.csv; header was: ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', 'Umsatztyp', 'IBAN', 'Betrag (â‚¬)', 'GlÃ¤ubiger-ID', 'Mandatsreferenz', 'Kundenreferenz']

ledgerlite/importer.py:89: ImportFailed
________________________ test_summary_mentions_encoding ________________________

fixtures = PosixPath('/workspace/ledgerlite/tests/fixtures')

    def test_summary_mentions_encoding(fixtures):
>       result = import_file(fixtures / "sparkasse_2024_05_bom.csv")
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

tests/test_importer.py:116: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
ledgerlite/importer.py:158: in import_file
    txn = _transaction(record, chosen)
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

record = {'BIC (SWIFT-Code)': '', 'Beguenstigter/Zahlungspflichtiger': 'Techniker Krankenkasse', 'Betrag': '-28,40', 'Buchungstext': 'FOLGELASTSCHRIFT', ...}
profile = Profile(name='sparkasse-camt', date='Buchungstag', payee='Beguenstigter/Zahlungspflichtiger', memo='Verwendungszweck',...lue_date='Valutadatum', currency='Waehrung', iban='Kontonummer/IBAN', debit_credit=None, status=None, booked_values=())

    def _transaction(record: dict[str, str], profile: profiles.Profile) -> Transaction:
        value_date = None
        if profile.value_date and record.get(profile.value_date):
            value_date = parse_date(record[profile.value_date])
        amount = record[profile.amount]
        if profile.debit_credit is not None:
            amount = f"{amount} {record.get(profile.debit_credit, '')}"
        currency = "EUR"
        if profile.currency and record.get(profile.currency):
            currency = record[profile.currency].strip()
        return Transaction(
>           date=parse_date(record[profile.date]),
                            ^^^^^^^^^^^^^^^^^^^^
            value_date=value_date,
            payee=" ".join(record[profile.payee].split()),
            memo=" ".join(record[profile.memo].split()),
            amount=parse_amount(amount),
            currency=currency,
            counterparty_iban=(record.get(profile.iban or "", "") or "").replace(" ", ""),
            raw=record,
        )
E       KeyError: 'Buchungstag'

ledgerlite/importer.py:106: KeyError
____________________ TestDetectEncoding.test_utf8_with_bom _____________________

self = <test_sniff.TestDetectEncoding object at 0x7f1621d08550>

    def test_utf8_with_bom(self):
        raw = codecs.BOM_UTF8 + f"{HEADER}\n{ROW}\n".encode("utf-8")
>       assert detect_encoding(raw) == "utf-8-sig"
E       AssertionError: assert 'utf-8' == 'utf-8-sig'
E         
E         - utf-8-sig
E         + utf-8

tests/test_sniff.py:28: AssertionError
________ TestDetectEncoding.test_multibyte_char_cut_by_sample[two-byte] ________

self = <test_sniff.TestDetectEncoding object at 0x7f1621d0a410>, char = 'é'

    @pytest.mark.parametrize("char", ["é", "€", "→"], ids=["two-byte", "three-byte-euro", "three-byte-arrow"])
    def test_multibyte_char_cut_by_sample(self, char):
        data = ("a" * (SAMPLE_BYTES - 1) + char).encode("utf-8")
        raw = data[:SAMPLE_BYTES]
        assert len(raw) == SAMPLE_BYTES
>       assert detect_encoding(raw) == "utf-8"
E       AssertionError: assert 'cp1252' == 'utf-8'
E         
E         - utf-8
E         + cp1252

tests/test_sniff.py:43: AssertionError
____ TestDetectEncoding.test_multibyte_char_cut_by_sample[three-byte-euro] _____

self = <test_sniff.TestDetectEncoding object at 0x7f1621d09810>, char = '€'

    @pytest.mark.parametrize("char", ["é", "€", "→"], ids=["two-byte", "three-byte-euro", "three-byte-arrow"])
    def test_multibyte_char_cut_by_sample(self, char):
        data = ("a" * (SAMPLE_BYTES - 1) + char).encode("utf-8")
        raw = data[:SAMPLE_BYTES]
        assert len(raw) == SAMPLE_BYTES
>       assert detect_encoding(raw) == "utf-8"
E       AssertionError: assert 'cp1252' == 'utf-8'
E         
E         - utf-8
E         + cp1252

tests/test_sniff.py:43: AssertionError
____ TestDetectEncoding.test_multibyte_char_cut_by_sample[three-byte-arrow] ____

self = <test_sniff.TestDetectEncoding object at 0x7f1621d0a550>, char = '→'

    @pytest.mark.parametrize("char", ["é", "€", "→"], ids=["two-byte", "three-byte-euro", "three-byte-arrow"])
    def test_multibyte_char_cut_by_sample(self, char):
        data = ("a" * (SAMPLE_BYTES - 1) + char).encode("utf-8")
        raw = data[:SAMPLE_BYTES]
        assert len(raw) == SAMPLE_BYTES
>       assert detect_encoding(raw) == "utf-8"
E       AssertionError: assert 'cp1252' == 'utf-8'
E         
E         - utf-8
E         + cp1252

tests/test_sniff.py:43: AssertionError
________________________ TestDetectFormat.test_bom_file ________________________

self = <test_sniff.TestDetectFormat object at 0x7f1621cacd90>
write_bytes = <function write_bytes.<locals>._write at 0x7f1621cc1ee0>

    def test_bom_file(self, write_bytes):
        path = write_bytes("bom.csv", codecs.BOM_UTF8 + f"{HEADER}\n{ROW}\n".encode("utf-8"))
>       assert detect_format(path) == FileFormat("utf-8-sig", ";", '"', 0)
E       AssertionError: assert FileFormat(en... skip_lines=0) == FileFormat(en... skip_lines=0)
E         
E         Omitting 3 identical items, use -vv to show
E         Differing attributes:
E         ['encoding']
E         
E         Drill down into differing attribute encoding:
E           encoding: 'utf-8' != 'utf-8-sig'
E           - utf-8-sig
E           + utf-8

tests/test_sniff.py:87: AssertionError
___ TestDetectFormat.test_large_file_with_multibyte_char_at_sample_boundary ____

self = <test_sniff.TestDetectFormat object at 0x7f1621caf190>
write_bytes = <function write_bytes.<locals>._write at 0x7f1621cc2340>

    def test_large_file_with_multibyte_char_at_sample_boundary(self, write_bytes):
        head = f"{HEADER}\n".encode("utf-8")
        filler = b'"01.05.24";"01.05.24";"LASTSCHRIFT";"Stadtwerke";"-1,00"\n'
        data = head + filler * ((SAMPLE_BYTES - len(head)) // len(filler) - 1)
        # pad so that the two bytes of "é" in ROW sit on both sides of the cut
        pad = SAMPLE_BYTES - len(data) - ROW.encode("utf-8").index("é".encode("utf-8")) - 1
        data += b" " * pad + (ROW + "\n").encode("utf-8") * 3
        assert data[SAMPLE_BYTES - 1 : SAMPLE_BYTES + 1] == "é".encode("utf-8")
        path = write_bytes("large.csv", data)
>       assert detect_format(path).encoding == "utf-8"
E       AssertionError: assert 'cp1252' == 'utf-8'
E         
E         - utf-8
E         + cp1252

tests/test_sniff.py:106: AssertionError
'''),
    "r2_bom": _src(
r'''
__________________ test_syntax_error_reports_line_and_column ___________________

    def test_syntax_error_reports_line_and_column():
        text = '{\n  "rules": [\n    {"account": "Expenses:Food", }\n  ]\n}\n'
        with pytest.raises(ConfigError) as excinfo:
            parse_rules(text, source="rules.json")
>       assert str(excinfo.value) == "rules.json:3:34: Expecting property name enclosed in double quotes"
E       AssertionError: assert 'rules.json:3...double quotes' == 'rules.json:3...double quotes'
E         
E         - rules.json:3:34: Expecting property name enclosed in double quotes
E         ?               ^
E         + rules.json:3:33: Expecting property name enclosed in double quotes
E         ?               ^

tests/test_config.py:58: AssertionError
_______________________ test_syntax_error_on_first_line ________________________

    def test_syntax_error_on_first_line():
        with pytest.raises(ConfigError) as excinfo:
            parse_rules('{"rules": [1, 2,, 3]}', source="rules.json")
>       assert str(excinfo.value) == "rules.json:1:17: Expecting value"
E       AssertionError: assert 'rules.json:1...pecting value' == 'rules.json:1...pecting value'
E         
E         - rules.json:1:17: Expecting value
E         ?               ^
E         + rules.json:1:16: Expecting value
E         ?               ^

tests/test_config.py:64: AssertionError
______________________ test_import_fixture[dkb_2024.csv] _______________________

fixtures = PosixPath('/workspace/ledgerlite/tests/fixtures')
name = 'dkb_2024.csv'

    @pytest.mark.parametrize("name", sorted(FIXTURE_COUNTS))
    def test_import_fixture(fixtures, name):
        profile, count = FIXTURE_COUNTS[name]
>       result = import_file(fixtures / name)
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^

tests/test_importer.py:20: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
ledgerlite/importer.py:144: in import_file
    chosen = _select_profile(header, profile, path)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

header = ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', ...]
name = None
path = PosixPath('/workspace/ledgerlite/tests/fixtures/dkb_2024.csv')

    def _select_profile(header: list[str], name: str | None, path: Path) -> profiles.Profile:
        if name is not None:
            return profiles.by_name(name)
        profile = profiles.profile_for(header)
        if profile is None:
>           raise ImportFailed(
                f"could not recognise the export format of {path.name}; header was: {header!r}"
            )
E           ledgerlite.importer.ImportFailed: could not recognise the export format of dkb_2024.csv; header was: ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', 'Umsatztyp', 'IBAN', 'Betrag (â‚¬)', 'GlÃ¤ubiger-ID', 'Mandatsreferenz', 'Kundenreferenz']

ledgerlite/importer.py:89: ImportFailed
___________________ test_payees_survive_the_sample_boundary ____________________

fixtures = PosixPath('/workspace/ledgerlite/tests/fixtures')

    def test_payees_survive_the_sample_boundary(fixtures):
        path = fixtures / "dkb_2024.csv"
        assert path.stat().st_size > SAMPLE_BYTES
>       result = import_file(path)
                 ^^^^^^^^^^^^^^^^^

tests/test_importer.py:38: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
ledgerlite/importer.py:144: in import_file
    chosen = _select_profile(header, profile, path)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

header = ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', ...]
name = None
path = PosixPath('/workspace/ledgerlite/tests/fixtures/dkb_2024.csv')

    def _select_profile(header: list[str], name: str | None, path: Path) -> profiles.Profile:
        if name is not None:
            return profiles.by_name(name)
        profile = profiles.profile_for(header)
        if profile is None:
>           raise ImportFailed(
                f"could not recognise the export format of {path.name}; header was: {header!r}"
            )
E           ledgerlite.importer.ImportFailed: could not recognise the export format of dkb_2024.csv; header was: ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', 'Umsatztyp', 'IBAN', 'Betrag (â‚¬)', 'GlÃ¤ubiger-ID', 'Mandatsreferenz', 'Kundenreferenz']

ledgerlite/importer.py:89: ImportFailed
________________________ test_import_many_drops_overlap ________________________

fixtures = PosixPath('/workspace/ledgerlite/tests/fixtures')

    def test_import_many_drops_overlap(fixtures):
>       march, year = import_many([fixtures / "dkb_2024_03.csv", fixtures / "dkb_2024.csv"])
                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

tests/test_importer.py:108: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
ledgerlite/importer.py:173: in import_many
    results = [import_file(p, profile=profile) for p in paths]
              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ledgerlite/importer.py:173: in <listcomp>
    results = [import_file(p, profile=profile) for p in paths]
               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ledgerlite/importer.py:144: in import_file
    chosen = _select_profile(header, profile, path)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

header = ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', ...]
name = None
path = PosixPath('/workspace/ledgerlite/tests/fixtures/dkb_2024.csv')

    def _select_profile(header: list[str], name: str | None, path: Path) -> profiles.Profile:
        if name is not None:
            return profiles.by_name(name)
        profile = profiles.profile_for(header)
        if profile is None:
>           raise ImportFailed(
                f"could not recognise the export format of {path.name}; header was: {header!r}"
            )
E           ledgerlite.importer.ImportFailed: could not recognise the export format of dkb_2024.csv; header was: ['Buchungsdatum', 'Wertstellung', 'Status', 'Zahlungspflichtige*r', 'ZahlungsempfÃ¤nger*in', 'Verwendungszweck', 'Umsatztyp', 'IBAN', 'Betrag (â‚¬)', 'GlÃ¤ubiger-ID', 'Mandatsreferenz', 'Kundenreferenz']

ledgerlite/importer.py:89: ImportFailed
________ TestDetectEncoding.test_multibyte_char_cut_by_sample[two-byte] ________

self = <test_sniff.TestDetectEncoding object at 0x7f303cd1b190>, char = 'é'

    @pytest.mark.parametrize("char", ["é", "€", "→"], ids=["two-byte", "three-byte-euro", "three-byte-arrow"])
    def test_multibyte_char_cut_by_sample(self, char):
        data = ("a" * (SAMPLE_BYTES - 1) + char).encode("utf-8")
        raw = data[:SAMPLE_BYTES]
        assert len(raw) == SAMPLE_BYTES
>       assert detect_encoding(raw) == "utf-8"
E       AssertionError: assert 'cp1252' == 'utf-8'
E         
E         - utf-8
E         + cp1252

tests/test_sniff.py:43: AssertionError
____ TestDetectEncoding.test_multibyte_char_cut_by_sample[three-byte-euro] _____

self = <test_sniff.TestDetectEncoding object at 0x7f303cd1b310>, char = '€'

    @pytest.mark.parametrize("char", ["é", "€", "→"], ids=["two-byte", "three-byte-euro", "three-byte-arrow"])
    def test_multibyte_char_cut_by_sample(self, char):
        data = ("a" * (SAMPLE_BYTES - 1) + char).encode("utf-8")
        raw = data[:SAMPLE_BYTES]
        assert len(raw) == SAMPLE_BYTES
>       assert detect_encoding(raw) == "utf-8"
E       AssertionError: assert 'cp1252' == 'utf-8'
E         
E         - utf-8
E         + cp1252

tests/test_sniff.py:43: AssertionError
____ TestDetectEncoding.test_multibyte_char_cut_by_sample[three-byte-arrow] ____

self = <test_sniff.TestDetectEncoding object at 0x7f303cd1b650>, char = '→'

    @pytest.mark.parametrize("char", ["é", "€", "→"], ids=["two-byte", "three-byte-euro", "three-byte-arrow"])
    def test_multibyte_char_cut_by_sample(self, char):
        data = ("a" * (SAMPLE_BYTES - 1) + char).encode("utf-8")
        raw = data[:SAMPLE_BYTES]
        assert len(raw) == SAMPLE_BYTES
>       assert detect_encoding(raw) == "utf-8"
E       AssertionError: assert 'cp1252' == 'utf-8'
E         
E         - utf-8
E         + cp1252

tests/test_sniff.py:43: AssertionError
___ TestDetectFormat.test_large_file_with_multibyte_char_at_sample_boundary ____

self = <test_sniff.TestDetectFormat object at 0x7f303ccc2a10>
write_bytes = <function write_bytes.<locals>._write at 0x7f303cccf740>

    def test_large_file_with_multibyte_char_at_sample_boundary(self, write_bytes):
        head = f"{HEADER}\n".encode("utf-8")
        filler = b'"01.05.24";"01.05.24";"LASTSCHRIFT";"Stadtwerke";"-1,00"\n'
        data = head + filler * ((SAMPLE_BYTES - len(head)) // len(filler) - 1)
        # pad so that the two bytes of "é" in ROW sit on both sides of the cut
        pad = SAMPLE_BYTES - len(data) - ROW.encode("utf-8").index("é".encode("utf-8")) - 1
        data += b" " * pad + (ROW + "\n").encode("utf-8") * 3
        assert data[SAMPLE_BYTES - 1 : SAMPLE_BYTES + 1] == "é".encode("utf-8")
        path = write_bytes("large.csv", data)
>       assert detect_format(path).encoding == "utf-8"
E       AssertionError: assert 'cp1252' == 'utf-8'
E         
E         - utf-8
E         + cp1252

tests/test_sniff.py:106: AssertionError
'''),
    "r3_trim": _src(
r'''
________ TestDetectEncoding.test_multibyte_char_cut_by_sample[two-byte] ________

self = <test_sniff.TestDetectEncoding object at 0x7f9009ee4d90>, char = 'é'

    @pytest.mark.parametrize("char", ["é", "€", "→"], ids=["two-byte", "three-byte-euro", "three-byte-arrow"])
    def test_multibyte_char_cut_by_sample(self, char):
        data = ("a" * (SAMPLE_BYTES - 1) + char).encode("utf-8")
        raw = data[:SAMPLE_BYTES]
        assert len(raw) == SAMPLE_BYTES
>       assert detect_encoding(raw) == "utf-8"
E       AssertionError: assert 'cp1252' == 'utf-8'
E         
E         - utf-8
E         + cp1252

tests/test_sniff.py:43: AssertionError
____ TestDetectEncoding.test_multibyte_char_cut_by_sample[three-byte-euro] _____

self = <test_sniff.TestDetectEncoding object at 0x7f9009ee4f50>, char = '€'

    @pytest.mark.parametrize("char", ["é", "€", "→"], ids=["two-byte", "three-byte-euro", "three-byte-arrow"])
    def test_multibyte_char_cut_by_sample(self, char):
        data = ("a" * (SAMPLE_BYTES - 1) + char).encode("utf-8")
        raw = data[:SAMPLE_BYTES]
        assert len(raw) == SAMPLE_BYTES
>       assert detect_encoding(raw) == "utf-8"
E       AssertionError: assert 'cp1252' == 'utf-8'
E         
E         - utf-8
E         + cp1252

tests/test_sniff.py:43: AssertionError
____ TestDetectEncoding.test_multibyte_char_cut_by_sample[three-byte-arrow] ____

self = <test_sniff.TestDetectEncoding object at 0x7f9009ee5790>, char = '→'

    @pytest.mark.parametrize("char", ["é", "€", "→"], ids=["two-byte", "three-byte-euro", "three-byte-arrow"])
    def test_multibyte_char_cut_by_sample(self, char):
        data = ("a" * (SAMPLE_BYTES - 1) + char).encode("utf-8")
        raw = data[:SAMPLE_BYTES]
        assert len(raw) == SAMPLE_BYTES
>       assert detect_encoding(raw) == "utf-8"
E       AssertionError: assert 'cp1252' == 'utf-8'
E         
E         - utf-8
E         + cp1252

tests/test_sniff.py:43: AssertionError
__________ TestDetectFormat.test_header_only_without_trailing_newline __________

self = <test_sniff.TestDetectFormat object at 0x7f9009eda510>
write_bytes = <function write_bytes.<locals>._write at 0x7f9009eef2e0>

    def test_header_only_without_trailing_newline(self, write_bytes):
        path = write_bytes("header.csv", HEADER.encode("utf-8"))
>       assert detect_format(path) == FileFormat("utf-8", ";", '"', 0)
               ^^^^^^^^^^^^^^^^^^^

tests/test_sniff.py:95: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
ledgerlite/sniff.py:129: in detect_format
    delimiter, quotechar, skip = detect_dialect(text)
                                 ^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

text = ''

    def detect_dialect(text: str) -> tuple[str, str, int]:
        """Return ``(delimiter, quotechar, skip_lines)`` for a decoded sample."""
        lines = text.splitlines()
        if not lines or not any(line.strip() for line in lines):
>           raise SniffError("the sample is empty")
E           ledgerlite.sniff.SniffError: the sample is empty

ledgerlite/sniff.py:109: SniffError
'''),
    "r3b_decode": _src(
r'''
__________ TestDetectFormat.test_header_only_without_trailing_newline __________

self = <test_sniff.TestDetectFormat object at 0x7fb93a90a190>
write_bytes = <function write_bytes.<locals>._write at 0x7fb93a90c180>

    def test_header_only_without_trailing_newline(self, write_bytes):
        path = write_bytes("header.csv", HEADER.encode("utf-8"))
>       assert detect_format(path) == FileFormat("utf-8", ";", '"', 0)
               ^^^^^^^^^^^^^^^^^^^

tests/test_sniff.py:95: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
ledgerlite/sniff.py:145: in detect_format
    delimiter, quotechar, skip = detect_dialect(text)
                                 ^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

text = ''

    def detect_dialect(text: str) -> tuple[str, str, int]:
        """Return ``(delimiter, quotechar, skip_lines)`` for a decoded sample."""
        lines = text.splitlines()
        if not lines or not any(line.strip() for line in lines):
>           raise SniffError("the sample is empty")
E           ledgerlite.sniff.SniffError: the sample is empty

ledgerlite/sniff.py:125: SniffError
'''),
}

# ---------------------------------------------------------------------------
# ledgerlite test fixtures: plausible bank exports, generated with a fixed seed
# ---------------------------------------------------------------------------

SAMPLE_BYTES = 8192  # ledgerlite.sniff.SAMPLE_BYTES
OWNER = "Jonas Weber"
DKB_HEADER = ("Buchungsdatum", "Wertstellung", "Status", "Zahlungspflichtige*r", "Zahlungsempfänger*in",
              "Verwendungszweck", "Umsatztyp", "IBAN", "Betrag (€)", "Gläubiger-ID", "Mandatsreferenz",
              "Kundenreferenz")
SPARKASSE_HEADER = ("Buchungstag", "Valutadatum", "Buchungstext", "Verwendungszweck", "Glaeubiger ID", "Mandatsreferenz",
              "Kundenreferenz (End-to-End)", "Beguenstigter/Zahlungspflichtiger", "Kontonummer/IBAN",
              "BIC (SWIFT-Code)", "Betrag", "Waehrung", "Info")
VOLKSBANK_HEADER = ("Buchungstag", "Valuta", "Auftraggeber/Zahlungsempfänger", "Empfänger/Zahlungspflichtiger",
             "Konto-Nr.", "IBAN", "BLZ", "BIC", "Vorgang/Verwendungszweck", "Kundenreferenz", "Währung", "Umsatz", " ")
CARD_MERCHANTS = (("REWE Markt GmbH", 8, 95), ("EDEKA Center Schröder", 6, 70), ("Café Müller", 3, 19),
                  ("Bäckerei Kröger", 2, 12), ("dm-drogerie markt", 4, 45), ("ARAL Station Lüneburg", 40, 85),
                  ("Eiscafé Venezia", 4, 16), ("Bücherstube am Sande", 9, 38), ("Apotheke am Markt", 5, 30))
MONTHLY = ((1, "Hausverwaltung Böttcher & Söhne", "Miete {m} Whg. 3. OG links", -890),
           (2, "Stadtwerke Lüneburg GmbH", "Abschlag Strom/Gas Vertragskonto 4100731188", -112),
           (3, "Vodafone GmbH", "Kundennummer 118402273 Rechnung {m}", -39.99),
           (5, "Spotify AB", "P2A1C9F3B0 Spotify Premium", -10.99),
           (27, "Nordlicht Software GmbH", "LOHN/GEHALT {m} PERSNR 00417", 3412.55),
           (28, "Techniker Krankenkasse", "Zusatzbeitrag {m}", -28.40))
MONTHS = ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
          "November", "Dezember")


def euro(value: float) -> str:
    """Format *value* like German banks do: ``-1.234,56``."""
    whole, frac = f"{abs(value):.2f}".split(".")
    groups = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    return ("-" if value < 0 else "") + ".".join([whole, *groups]) + "," + frac


def quoted(fields: Any) -> str:
    """Join *fields* as a fully quoted, semicolon separated CSV line."""
    return ";".join(f'"{f}"' for f in fields)


def bank_rows(rng: random.Random, year: int, months: Any) -> list[tuple]:
    """(date, payee, memo, amount) for a plausible private checking account."""
    rows = []
    for month in months:
        for day in range(1, 29):
            date = dt.date(year, month, day)
            for fday, payee, memo, amount in MONTHLY:
                if fday == day:
                    rows.append((date, payee, memo.format(m=f"{MONTHS[month - 1]} {year}"), amount))
            for _ in range(rng.choice((0, 1, 1, 2, 2))):
                payee, low, high = rng.choice(CARD_MERCHANTS)
                memo = f"VISA Debitkartenumsatz {rng.randint(10**5, 10**6 - 1)}"
                rows.append((date, payee, memo, -rng.randint(low * 100, high * 100) / 100))
    return rows


def dkb_export(rows: list[tuple], rng: random.Random, stamp: str, balance: float, straddle: bool = False) -> bytes:
    """A DKB (2023 layout) export with its four metadata lines."""
    lines = [quoted(["Girokonto", "DE27 1203 0000 1020 4471 33"]), '""',
             quoted([f"Kontostand vom {stamp}:", f"{euro(balance)} €"]), '""', quoted(DKB_HEADER)]
    for date, payee, memo, amount in sorted(rows, key=lambda r: r[0], reverse=True):
        d = f"{date:%d.%m.%y}"
        payer, payee = (payee, OWNER) if amount > 0 else (OWNER, payee)
        kind = "Eingang" if amount > 0 else "Ausgang"
        lines.append(quoted([d, d, "Gebucht", payer, payee, memo, kind, "", euro(amount), "", "", ""]))
    if straddle:
        lines = _straddle(lines, rng)
    return ("\n".join(lines) + "\n").encode("utf-8")


def _straddle(lines: list[str], rng: random.Random, payee: str = "Café Müller") -> list[str]:
    """Insert a *payee* row so that its first two-byte character is cut at SAMPLE_BYTES.

    Card rows just above the insertion point get acquirer reference numbers
    (as real DKB exports often have) to make the byte offsets line up.
    """
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line.encode()) + 1
    date = lines[40].split('";"')[0].strip('"')
    row = quoted([date, date, "Gebucht", OWNER, payee, f"VISA Debitkartenumsatz {rng.randint(10**5, 10**6 - 1)}",
                  "Ausgang", "", euro(-rng.randint(300, 1900) / 100), "", "", ""])
    cut = row.encode().index("é".encode())
    j = max(i for i in range(len(lines)) if SAMPLE_BYTES - 1 - offsets[i] - cut >= 8)
    gap = SAMPLE_BYTES - 1 - offsets[j] - cut
    k = j - 1
    while gap:
        fields = lines[k].split('";"')
        if k > 5 and "VISA" in fields[5] and "ARN" not in fields[5]:
            digits = gap - 5 if gap - 5 <= 23 else min(23, gap - 13)
            fields[5] += " ARN " + "".join(str(rng.randint(0, 9)) for _ in range(digits))
            lines[k] = '";"'.join(fields)
            gap -= 5 + digits
        k -= 1
    lines.insert(j, row.replace(date, lines[j - 1].split('";"')[0].strip('"')))
    return lines


def sparkasse_export(rows: list[tuple], rng: random.Random) -> bytes:
    """A Sparkasse CSV-CAMT export: UTF-8 with BOM, CRLF line ends."""
    lines = [quoted(SPARKASSE_HEADER)]
    for date, payee, memo, amount in sorted(rows, key=lambda r: r[0], reverse=True):
        d = f"{date:%d.%m.%y}"
        text = "KARTENZAHLUNG" if memo.startswith("VISA") else ("GUTSCHR. UEBERWEISUNG" if amount > 0 else "FOLGELASTSCHRIFT")
        memo = memo.replace("VISA Debitkartenumsatz", f"{date:%Y-%m-%d}T{rng.randint(8, 20):02d}:{rng.randint(0, 59):02d} Debitk.1 2027-08")
        lines.append(quoted([d, d, text, memo, "", "", "", payee, "", "", euro(amount), "EUR", "Umsatz gebucht"]))
    return codecs.BOM_UTF8 + ("\r\n".join(lines) + "\r\n").encode("utf-8")


def volksbank_export(rows: list[tuple]) -> bytes:
    """An old Volksbank export: cp1252, unsigned amounts plus an S/H column."""
    lines = [";".join(VOLKSBANK_HEADER)]
    for date, payee, memo, amount in sorted(rows, key=lambda r: r[0]):
        d = f"{date:%d.%m.%Y}"
        lines.append(";".join([d, d, OWNER, payee, "", "", "", "", memo, "", "EUR", euro(abs(amount)), "S" if amount < 0 else "H"]))
    return ("\r\n".join(lines) + "\r\n").encode("cp1252")


def ledger_fixtures() -> dict[str, bytes]:
    """The CSV fixtures of ledgerlite's test suite, keyed by path."""
    rng = random.Random(2024)
    year = bank_rows(rng, 2024, range(1, 13))
    march = [r for r in year if r[0].month == 3]
    spk = bank_rows(rng, 2024, [5])
    vb = bank_rows(rng, 2019, [10])
    return {
        "tests/fixtures/dkb_2024.csv": dkb_export(year, rng, "31.12.2024", 2184.17, straddle=True),
        "tests/fixtures/dkb_2024_03.csv": dkb_export(march, rng, "31.03.2024", 1873.40),
        "tests/fixtures/sparkasse_2024_05_bom.csv": sparkasse_export(spk, rng),
        "tests/fixtures/volksbank_2019_cp1252.csv": volksbank_export(vb),
    }

# ---------------------------------------------------------------------------
# Tools of the coding agent, simulated on a virtual checkout
# ---------------------------------------------------------------------------

REPO_ROOT = "/workspace/ledgerlite"
READ_LIMIT = 600  # lines returned by one read_file call


class VirtualRepo:
    """The ledgerlite checkout plus read-only standard-library files.

    Paths relative to the checkout address project files; absolute paths
    under ``PY_LIB`` map to the running interpreter's standard library.
    """

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = dict(files)

    def _text(self, path: str) -> str | None:
        if path.startswith(PY_LIB + "/"):
            source = STDLIB / path[len(PY_LIB) + 1 :]
            return source.read_text(encoding="utf-8") if source.is_file() else None
        data = self.files.get(path.removeprefix("./"))
        return None if data is None else data.decode("utf-8", errors="replace")

    def read_file(self, path: str, start_line: int = 1) -> str:
        text = self._text(path)
        if text is None:
            return f"Error: file not found: {path}"
        lines = text.splitlines()
        chunk = lines[start_line - 1 : start_line - 1 + READ_LIMIT]
        body = "\n".join(f"{n:6}\t{line}" for n, line in enumerate(chunk, start_line))
        end = start_line + len(chunk) - 1
        if start_line > 1 or end < len(lines):
            body += f"\n[showing lines {start_line}-{end} of {len(lines)}"
            body += f"; call read_file with start_line={end + 1} to continue]" if end < len(lines) else "]"
        return body

    def list_dir(self, path: str) -> str:
        prefix = "" if path in (".", "") else path.rstrip("/") + "/"
        dirs: set[str] = set()
        entries: dict[str, int] = {}
        for name, data in self.files.items():
            if not name.startswith(prefix):
                continue
            head, sep, _ = name[len(prefix) :].partition("/")
            if sep:
                dirs.add(head + "/")
            else:
                entries[head] = len(data)
        if not dirs and not entries:
            return f"Error: not a directory: {path}"
        rows = [f"{d}" for d in sorted(dirs)]
        rows += [f"{n:<32}{size:>8} bytes" for n, size in sorted(entries.items())]
        return "\n".join(rows)

    def grep(self, pattern: str, path: str) -> str:
        regex = re.compile(pattern)
        if path.startswith(PY_LIB):
            root = STDLIB / path[len(PY_LIB) + 1 :]
            files = [root] if root.is_file() else sorted(root.rglob("*.py"))
            names = [(f"{PY_LIB}/{f.relative_to(STDLIB)}", f.read_text(encoding="utf-8")) for f in files]
        else:
            prefix = "" if path in (".", "") else path.rstrip("/")
            names = [
                (name, data.decode("utf-8", errors="replace"))
                for name, data in sorted(self.files.items())
                if not prefix or name == prefix or name.startswith(prefix + "/")
            ]
        hits = [
            f"{name}:{number}:{line}"
            for name, text in names
            for number, line in enumerate(text.splitlines(), 1)
            if regex.search(line)
        ]
        if not hits:
            return "No matches found."
        if len(hits) > 100:
            return "\n".join(hits[:100]) + f"\n[{len(hits) - 100} more matches not shown]"
        return "\n".join(hits)

    def edit_file(self, path: str, old: str, new: str) -> str:
        text = self.files[path].decode("utf-8")
        count = text.count(old)
        if count != 1:
            return f"Error: old text found {count} times in {path}; it must match exactly once"
        start = text[: text.index(old)].count("\n") + 1
        self.files[path] = text.replace(old, new).encode("utf-8")
        removed, added = old.count("\n"), new.count("\n")
        return f"Edited {path}: replaced {removed} line(s) at line {start} with {added} line(s)."


def pytest_sep(char: str, title: str = "", width: int = 80) -> str:
    """A pytest separator line such as ``==== 3 passed in 0.1s ====``."""
    if not title:
        return char * width
    fill = char * max((width - len(title) - 2) // 2, 1)
    line = f"{fill} {title} {fill}"
    return line + char if len(line) + 1 <= width else line


def pytest_output(
    args: str,
    test_ids: list[str],
    failed: set[str],
    failures: str = "",
    duration: str = "0.31s",
) -> str:
    """Render a pytest run over *test_ids* in default or ``-v`` mode.

    *failures* is the body of the FAILURES section; the crash message of each
    failing test is taken from it for the short summary, as pytest does.
    """
    verbose = "-v" in args.split()
    paths = [a for a in args.split() if not a.startswith("-")]
    # pytest runs the files in the order they are given on the command line
    ids = [t for path in paths for t in test_ids if t.split("::")[0] == path] if paths else list(test_ids)
    header = [pytest_sep("=", "test session starts")]
    platform = f"platform linux -- Python {PY_VERSION}, pytest-8.3.2, pluggy-1.5.0"
    if verbose:
        header += [f"{platform} -- {REPO_ROOT}/.venv/bin/python", "cachedir: .pytest_cache"]
    else:
        header.append(platform)
    header += [f"rootdir: {REPO_ROOT}", "configfile: pyproject.toml"]
    if not paths:
        header.append("testpaths: tests")
    header.append(f"{'collecting ... ' if verbose else ''}collected {len(ids)} items")
    lines = header + [""]
    total = len(ids)
    if verbose:
        for done, test_id in enumerate(ids, 1):
            status = "FAILED" if test_id in failed else "PASSED"
            progress = f"[{100 * done // total:3d}%]"
            text = f"{test_id} {status}"
            lines.append(text + " " + progress.rjust(max(79 - len(text) - 1, len(progress))))
    else:
        done = 0
        for path in dict.fromkeys(t.split("::")[0] for t in ids):
            marks = "".join("F" if t in failed else "." for t in ids if t.startswith(path + "::"))
            done += len(marks)
            text = f"{path} {marks}"
            progress = f"[{100 * done // total:3d}%]"
            lines.append(text + " " + progress.rjust(79 - len(text) - 1))
    lines.append("")
    if failed:
        lines += [pytest_sep("=", "FAILURES"), failures.rstrip("\n"), pytest_sep("=", "short test summary info")]
        messages = _crash_messages(failures)
        for test_id in ids:
            if test_id in failed:
                lines.append(_summary_line(test_id, messages[test_id]))
        counts = f"{len(failed)} failed, {total - len(failed)} passed in {duration}"
    else:
        counts = f"{total} passed in {duration}"
    lines.append(pytest_sep("=", counts))
    return "\n".join(lines)


def _crash_messages(failures: str) -> dict[str, str]:
    """Map test ids to the first line of their exception, from a FAILURES body."""
    messages: dict[str, str] = {}
    for block in re.split(r"\n(?=_{3,} \S.* _{3,}\n)", "\n" + failures):
        block = block.strip("\n")
        if not block:
            continue
        title = block.split("\n", 1)[0].strip("_ ")
        location = re.findall(r"^(tests/[\w/]+\.py):\d+: ", block, re.M)[0]
        node = location + "::" + title.replace(".", "::", 1) if "." in title.split("[")[0] else location + "::" + title
        groups = re.findall(r"(?:^E .*\n?)+", block, re.M)
        messages[node] = groups[-1].split("\n", 1)[0][1:].strip()
    return messages


def _summary_line(test_id: str, message: str, width: int = 80) -> str:
    """A ``FAILED id - message`` line, trimmed to the terminal width."""
    line = f"FAILED {test_id}"
    room = width - len(line)
    if room < len(" - ") + 3:
        return line
    if len(" - ") + len(message) > room:
        message = message[: room - 3 - len(" - ")] + "..."
    return f"{line} - {message}"


def _failing_tests(failures: str) -> set[str]:
    return set(_crash_messages(failures))


# ---------------------------------------------------------------------------
# Sample 1: the coding agent
# ---------------------------------------------------------------------------

CODING_SYSTEM = para(
    """
    You are an autonomous software engineering agent working inside a checkout of a
    Python project at /workspace/ledgerlite. You are paired with the project's
    maintainer, who gives you tasks in plain language. You can read and search files,
    edit them, and run the test suite; you cannot run arbitrary shell commands, install
    packages or access the network.

    Work like a careful senior engineer. Before changing code, find out how it works:
    read the relevant modules and tests, and when behaviour depends on the standard
    library, read the standard-library source (it is installed under /usr/lib/python3.x)
    rather than relying on memory. Reproduce the problem with the existing tests or a new
    one before fixing it, and run the affected tests after every change. Prefer the
    smallest change that fixes the root cause over workarounds in the callers.

    Rules:
    - Keep the public API stable unless the maintainer asks otherwise: ledgerlite's
      public names are those exported from ledgerlite/__init__.py.
    - Do not modify the fixtures in tests/fixtures/; they are anonymised real exports.
    - Keep the style of the surrounding code (type hints, docstrings, line length 110).
    - Add or adjust tests for every behaviour you change, and add a CHANGELOG entry under
      "Unreleased" for user-visible fixes.
    - Never claim that tests pass unless you have run them and seen them pass.

    Tools:
    - list_dir(path): directory listing; paths are relative to the repository root.
    - read_file(path, start_line?): returns up to 600 numbered lines. Use start_line to
      page through longer files.
    - grep(pattern, path): Python regular-expression search in a file or recursively in a
      directory; prints path:line:text.
    - edit_file(path, old, new): replaces the unique occurrence of `old` with `new`. Copy
      `old` exactly from read_file output, without the line-number prefix.
    - run_tests(args): runs `python -m pytest <args>` in the repository root.
    You may issue several independent tool calls at once (for example reading two
    files); they run in parallel.

    When you are done, reply with a short summary for the maintainer: the root cause, what
    you changed (with file names), how you verified it, and anything you noticed but
    deliberately left alone.
    """
)

CODING_TOOLS = [
    tool_schema(
        "read_file",
        "Read a text file and return its lines prefixed with line numbers (at most 600 lines per call).",
        {
            "path": prop("string", "File path, relative to the repository root or absolute."),
            "start_line": prop("integer", "1-based line to start reading at (default 1).", minimum=1),
        },
        ["path"],
    ),
    tool_schema(
        "grep",
        "Search files for a Python regular expression. Prints matches as path:line:text.",
        {
            "pattern": prop("string", "Python regular expression."),
            "path": prop("string", "File or directory to search (recursively)."),
        },
        ["pattern", "path"],
    ),
    tool_schema(
        "run_tests",
        "Run `python -m pytest` with the given arguments in the repository root and return its output.",
        {"args": prop("string", "Arguments for pytest, e.g. 'tests/test_sniff.py -v' or '' for the full suite.")},
        ["args"],
    ),
    tool_schema(
        "edit_file",
        "Replace exactly one occurrence of `old` with `new` in a file.",
        {
            "path": prop("string", "File path relative to the repository root."),
            "old": prop("string", "Exact text to replace; must occur exactly once."),
            "new": prop("string", "Replacement text."),
        },
        ["path", "old", "new"],
    ),
    tool_schema(
        "list_dir",
        "List the entries of a directory with file sizes.",
        {"path": prop("string", "Directory path relative to the repository root; '.' for the root.")},
        ["path"],
    ),
]


def _user_traceback(repo: VirtualRepo) -> str:
    """The traceback the maintainer pastes, with line numbers of the real sources."""
    site = f"/home/jonas/.local/pipx/venvs/ledgerlite/lib/python{PY_SHORT}/site-packages/ledgerlite"
    cli = repo.files["ledgerlite/cli.py"].decode()
    imp = repo.files["ledgerlite/importer.py"].decode()
    frames = [
        (f"{site}/cli.py", line_of(cli, "return args.func(args)"), "main", "return args.func(args)", 7, 15),
        (f"{site}/cli.py", line_of(cli, "results = import_many("), "cmd_import",
         "results = import_many(args.files, profile=args.profile)", 10, 45),
        (f"{site}/importer.py", line_of(imp, "results = [import_file("), "import_many",
         "results = [import_file(p, profile=profile) for p in paths]", 10, 48),
        (f"{site}/importer.py", line_of(imp, "results = [import_file("), "<listcomp>",
         "results = [import_file(p, profile=profile) for p in paths]", 11, 31),
        (f"{site}/importer.py", line_of(imp, "txn = _transaction(record, chosen)"), "import_file",
         "txn = _transaction(record, chosen)", 6, 28),
    ]
    out = [
        "Traceback (most recent call last):",
        '  File "/home/jonas/.local/bin/ledgerlite", line 8, in <module>',
        "    sys.exit(main())",
        "             ^^^^^^",
    ]
    for path, number, func, code, col, width in frames:
        out += [f'  File "{path}", line {number}, in {func}', f"    {code}", " " * (4 + col) + "^" * width]
    out += [
        f'  File "{site}/importer.py", line {line_of(imp, "date=parse_date(record[profile.date])")}, in _transaction',
        "    date=parse_date(record[profile.date]),",
        "                    ~~~~~~^^^^^^^^^^^^^^",
        "KeyError: 'Buchungstag'",
    ]
    return "\n".join(out)


def coding_agent() -> dict[str, Any]:
    """A coding agent tracks down two encoding bugs and a config off-by-one."""
    files = {path: text.encode("utf-8") for path, text in LEDGERLITE_FILES.items()}
    files.update(ledger_fixtures())
    repo = VirtualRepo(files)
    all_ids = [f"{path}::{name}" for path, names in LEDGERLITE_TESTS.items() for name in names]
    new_test = "tests/test_sniff.py::TestDetectEncoding::test_truncated_sequence_at_end_of_whole_file"
    ids_before = [t for t in all_ids if t != new_test]

    def run(args: str, stage: str | None = None, duration: str = "0.31s", ids: list[str] = ids_before) -> Call:
        failures = PYTEST_FAILURES[stage] if stage else ""
        failed = _failing_tests(failures) if stage else set()
        return Call("run_tests", {"args": args}, pytest_output(args, ids, failed, failures, duration))

    def read(path: str, start_line: int = 1) -> Call:
        args: dict[str, Any] = {"path": path}
        if start_line != 1:
            args["start_line"] = start_line
        return Call("read_file", args, repo.read_file(path, start_line))

    def grep(pattern: str, path: str) -> Call:
        return Call("grep", {"pattern": pattern, "path": path}, repo.grep(pattern, path))

    def ls(path: str) -> Call:
        return Call("list_dir", {"path": path}, repo.list_dir(path))

    def edit(change: tuple[str, str, str]) -> Call:
        path, old, new = change
        return Call("edit_file", {"path": path, "old": old, "new": new}, repo.edit_file(path, old, new))

    def edit_text(path: str, old: str, new: str) -> Call:
        return edit((path, old, new))

    chat = Chat("coding", CODING_TOOLS)
    chat.system(CODING_SYSTEM)
    chat.user(
        dedent(
            """
            Two bug reports came in since we released 0.9.x with the new format detection, and CI on main
            has been red since the sniffing refactor as well.

            1) A user on Sparkasse gets this when importing their May export (`ledgerlite import --rules
            ~/finanzen/rules.json ~/Downloads/Umsaetze_DE4412_2024-05.csv`):

            ```
            {traceback}
            ```

            2) My own full-year DKB export fails with "could not recognise the export format of
            dkb_2024.csv", and the header in the message looks garbled ('ZahlungsempfÃ¤nger*in',
            'Betrag (â‚¬)'). The March export of the same account imports fine, so it's not the
            profile.

            I put both files (anonymised) into tests/fixtures. Please find the root cause, fix it without
            changing the public API (`import_file`, `detect_format` etc. must keep working as they are
            called today), and get the whole test suite green. There's also a failing config test I
            haven't looked at - please check whether it's related.
            """
        ).replace("{traceback}", _user_traceback(repo))
    )

    chat.step(
        ls("."),
        run("", "r1_full", "0.64s"),
        say="I'll start with the repository layout and a full test run to see what is failing on main.",
    )
    chat.step(ls("ledgerlite"), ls("tests"), read("README.md"))
    chat.step(
        read("docs/bank-formats.md"),
        say=(
            "14 failures in three groups: BOM handling (Sparkasse, `utf-8` vs `utf-8-sig`), multi-byte "
            "characters cut at the sample boundary (DKB full year), and the JSON column numbers in "
            "test_config. The README points to docs/bank-formats.md for the column layouts; let me check it."
        ),
    )
    chat.step(read("CHANGELOG.md"), read("pyproject.toml"))
    chat.step(read("ledgerlite/sniff.py"), read("ledgerlite/importer.py"))
    chat.step(read("tests/test_sniff.py"), read("tests/conftest.py"))
    chat.step(grep(r"Buchungstag", "ledgerlite"))
    chat.step(read("ledgerlite/profiles.py"))
    chat.step(read("tests/fixtures/sparkasse_2024_05_bom.csv"))
    chat.step(
        read(f"{PY_LIB}/csv.py"),
        say=(
            "The fixture starts with a byte order mark (U+FEFF before the first quote). Before blaming the "
            "encoding I want to be sure csv.Sniffer is not what mangles the header, so let me read it."
        ),
    )
    chat.step(
        read(f"{PY_LIB}/encodings/utf_8_sig.py"),
        read(f"{PY_LIB}/encodings/__init__.py"),
        read(f"{PY_LIB}/encodings/aliases.py"),
        say=(
            "Sniffer only looks at quote/delimiter patterns, so the BOM doesn't disturb the delimiter "
            "guess - but csv.reader keeps it: the first cell becomes '\\ufeff\"Buchungstag\"', the header "
            "never contains 'Buchungstag', and profile matching still succeeds because it only checks "
            "payee/memo/amount. So `_transaction` raises KeyError. detect_encoding() returns plain "
            "'utf-8' for BOM files; the utf-8-sig codec is what strips the BOM. Checking the codec and "
            "how codec names are normalised, since FileFormat.encoding is passed straight to open()."
        ),
    )
    chat.step(grep(r"BOM_UTF8", f"{PY_LIB}/codecs.py"))
    chat.step(edit(EDIT_BOM))
    chat.step(run("-v", "r2_bom", "0.20s"))
    chat.step(
        grep(r"Café Müller", "tests"),
        say=(
            "The BOM cases pass (9 failures left, 2 of them the config tests). The rest is the multi-byte "
            "boundary: the parametrised test cuts 'é', '€' and '→' in half at SAMPLE_BYTES and "
            "detect_encoding() answers cp1252. Let me see where the DKB fixture's payees sit."
        ),
    )
    chat.step(read("tests/fixtures/dkb_2024.csv"))
    chat.step(
        read("tests/test_importer.py"),
        read("tests/fixtures/dkb_2024_03.csv"),
        say="Comparing with the March export, which the maintainer says imports fine.",
    )
    chat.step(
        read(f"{PY_LIB}/encodings/cp1252.py"),
        read("tests/fixtures/volksbank_2019_cp1252.csv"),
        say=(
            "dkb_2024_03.csv is under 6 KB, so its sample is the whole file and never cuts a character. "
            "Now checking how permissive the cp1252 fallback is."
        ),
    )
    chat.step(
        edit(EDIT_TRIM),
        say=(
            "Confirmed: bytes 8191-8192 of dkb_2024.csv are the two bytes of 'é' in 'Café Müller'. "
            "raw.decode('utf-8') fails on the truncated sequence, the loop falls through to cp1252 - "
            "which maps nearly every byte, so it 'succeeds' - and the whole file is then read as cp1252, "
            "which garbles the header. A first, simple idea: only sniff complete lines."
        ),
    )
    chat.step(run("tests/test_sniff.py tests/test_importer.py -v", "r3_trim", "0.12s"))
    chat.step(
        read(f"{PY_LIB}/codecs.py"),
        say=(
            "Trimming was the wrong layer: detect_encoding() is public and gets raw byte prefixes "
            "directly (three failures remain), and a file that is a single header line without a "
            "trailing newline is now trimmed to nothing. What we need is decoding that tolerates an "
            "incomplete sequence at the end of a chunk - that's what incremental decoders are for. "
            "Let me check the exact API."
        ),
    )
    chat.step(read(f"{PY_LIB}/codecs.py", 601))
    chat.step(grep(r"getincrementaldecoder|def _get_decoder|final=", f"{PY_LIB}/_pyio.py"))
    chat.step(
        read(f"{PY_LIB}/io.py"),
        read(f"{PY_LIB}/_pyio.py"),
        say=(
            "io.TextIOWrapper itself is C code; _pyio is the pure-Python reference implementation of the "
            "same algorithm. I'll look at how open() sets up the text layer first, then at the decoder loop."
        ),
    )
    pyio = stdlib_source("_pyio.py")
    first = line_of(pyio, "class IncrementalNewlineDecoder(")
    chat.step(read(f"{PY_LIB}/_pyio.py", first))
    chat.step(read(f"{PY_LIB}/_pyio.py", first + READ_LIMIT))
    chat.step(
        read("ledgerlite/__init__.py"),
        read("tests/test_cli.py"),
        say="Before touching detect_encoding()'s signature: what is public, and how does the CLI test call detection?",
    )
    chat.step(
        edit(EDIT_DECODE),
        say=(
            "TextIOWrapper does exactly this: it feeds chunks to `decoder.decode(input_chunk, eof)` and only "
            "passes final=True at end of file. I'll add a small decode_sample() helper, use it in "
            "detect_encoding() and detect_format(), and undo the trimming. detect_encoding() gets a "
            "keyword-only `final=False`, so existing callers are unaffected."
        ),
    )
    chat.step(edit(EDIT_TRY))
    chat.step(run("tests/test_sniff.py -v", "r3b_decode", "0.07s"))
    chat.step(
        edit(EDIT_FORMAT),
        say=(
            "The encoding tests pass; the remaining failure is the trimming I added to detect_format() "
            "earlier. Replacing it with decode_sample(), with final=True when the file is shorter than "
            "the sample."
        ),
    )
    chat.step(read("ledgerlite/sniff.py"))
    chat.step(run("tests/test_sniff.py tests/test_importer.py -v", None, "0.12s"))
    chat.step(grep(r"detect_encoding\(|\.decode\(", "."))
    chat.step(read("ledgerlite/cli.py"))
    chat.step(grep(r"class FileType|if string == '-'", f"{PY_LIB}/argparse.py"))
    argparse_src = stdlib_source("argparse.py")
    chat.step(
        read(f"{PY_LIB}/argparse.py", line_of(argparse_src, "class FileType(")),
        say=(
            "cli.py never decodes a partial sample itself. One thing I want to double-check while here: "
            "`--output` uses argparse.FileType('w', encoding='utf-8'), and the CHANGELOG promises UTF-8 "
            "output regardless of locale."
        ),
    )
    chat.step(
        read("ledgerlite/config.py"),
        read("tests/test_config.py"),
        say=(
            "Sniffing and importing are green, and nothing else decodes partial samples. Now the config "
            "failures: both report a column one lower than expected."
        ),
    )
    chat.step(read(f"{PY_LIB}/json/decoder.py"))
    chat.step(read(f"{PY_LIB}/json/__init__.py"))
    chat.step(
        edit(EDIT_CONFIG_USE),
        say=(
            "JSONDecodeError computes `colno = pos - doc.rfind('\\n', 0, pos)`, which is already 1-based; "
            "config._position() subtracts another 1, so every column is off by one (0-based). This is "
            "unrelated to the encoding bug - it came in with the `file:line:column` change in 0.9.0. The "
            "exception already carries lineno/colno, so the helper can go."
        ),
    )
    chat.step(edit(EDIT_CONFIG_DEL))
    chat.step(grep(r"_position", "."))
    chat.step(run("tests/test_config.py -v", None, "0.03s", ids_before))
    chat.step(
        edit(EDIT_TEST),
        say="Adding a regression test for the `final=True` path (a file that really ends mid-character).",
    )
    chat.step(
        edit_text(
            "CHANGELOG.md",
            "## Unreleased\n",
            dedent(
                """
                ## Unreleased

                - Fix: exports with a UTF-8 byte order mark (Sparkasse CSV-CAMT) failed with
                  `KeyError: 'Buchungstag'`; BOM files are now read as `utf-8-sig`.
                - Fix: UTF-8 exports larger than 8 KiB could be misdetected as cp1252 when the detection
                  sample ended inside a multi-byte character, garbling umlauts in the header and payees.
                  New helper `sniff.decode_sample()`; `detect_encoding()` takes an optional `final=`.
                - Fix: `check-rules` reported JSON syntax error columns off by one.
                """
            ),
        )
    )
    chat.step(run("-v", None, "0.66s", all_ids))
    chat.reply(
        dedent(
            """
            All 106 tests pass now (105 existing + 1 new). Summary:

            **Root causes** (both in `ledgerlite/sniff.py`, introduced by the 0.9.0 detection rewrite):

            1. *BOM files* - `detect_encoding()` recognised the UTF-8 BOM but returned `"utf-8"`. That codec
               keeps the BOM as U+FEFF, so csv.reader produced a first header cell `'\\ufeff"Buchungstag"'`.
               Profile matching only checks payee/memo/amount, so the Sparkasse profile was still chosen and
               `_transaction()` failed with `KeyError: 'Buchungstag'`. It now returns `"utf-8-sig"`, which
               strips the BOM (checked in `encodings/utf_8_sig.py`).
            2. *Multi-byte character at the 8 KiB sample boundary* - `raw.decode(encoding)` on the truncated
               sample raised `UnicodeDecodeError` when the cut fell inside a character (in `dkb_2024.csv`,
               bytes 8191/8192 are the `é` of "Café Müller"). Detection then fell through to cp1252, which
               accepts almost any bytes, and the whole file was decoded as cp1252 - hence
               'ZahlungsempfÃ¤nger*in' and the unrecognised profile. Only files > 8 KiB with a non-ASCII
               character on the boundary were affected, which is why the March export worked.

            **Changes**
            - `ledgerlite/sniff.py`: new `decode_sample(raw, encoding, *, final=False)` using
              `codecs.getincrementaldecoder()`, the same mechanism `io.TextIOWrapper` uses between chunks;
              `detect_encoding()` gained a keyword-only `final=False` (backwards compatible);
              `detect_format()` passes `final=True` when the sample is the whole file, so genuinely truncated
              files are still rejected as UTF-8.
            - `ledgerlite/config.py`: the unrelated config failure was an off-by-one: `_position()` turned
              JSONDecodeError's 1-based column into a 0-based one. It now uses `exc.lineno`/`exc.colno` and
              the helper is gone.
            - `tests/test_sniff.py`: regression test for a whole file that ends mid-character.
            - `CHANGELOG.md`: three entries under "Unreleased".

            **Not changed**: I first tried trimming the sample to the last newline; it broke single-line files
            and didn't help direct `detect_encoding()` callers, so I reverted it. One thing you may want to
            revisit: profile matching ignores the date column, which is what turned the BOM problem into a
            confusing KeyError instead of a "could not recognise the export" error. Also unrelated but worth
            a ticket: `argparse.FileType` returns `sys.stdout` unchanged for `-o -` (and without `-o` the CLI
            writes to `sys.stdout` too), so in both cases the output uses the locale encoding, not UTF-8 as
            the 0.8.2 CHANGELOG entry says. Only `-o file.ledger` is guaranteed UTF-8.
            """
        )
    )
    return chat.to_dict()


# ---------------------------------------------------------------------------
# Sample 2: the research agent -- web pages
# ---------------------------------------------------------------------------

PAGE_LIMIT = 20_000  # characters returned by one fetch_page call


def _limit(text: str) -> str:
    """Cut a page to PAGE_LIMIT characters the way the fetch tool does."""
    if len(text) <= PAGE_LIMIT:
        return text
    cut = text.rfind("\n", 0, PAGE_LIMIT)
    return text[:cut] + f"\n\n[Page truncated: {len(text) - cut:,} more characters not shown]"


def _page(title: str, url: str, body: str) -> str:
    """Page text as returned by fetch_page: title, address, readable text."""
    return _limit(f"{title}\n{url}\n\n{body.strip()}\n")


def _topic(name: str) -> str:
    from pydoc_data.topics import topics

    return topics[name]


def docs_reference_page(url: str, chapter: str, topic: str, anchor_heading: str | None) -> str:
    """A docs.python.org reference page, starting at the section named by the URL's fragment."""
    text = _topic(topic)
    if anchor_heading:
        text = text[text.index(anchor_heading) :]
    crumbs = f"Python {PY_VERSION} documentation » The Python Language Reference » {chapter}"
    return _page(f"{chapter} — Python {PY_SHORT} documentation", url, f"{crumbs}\n\n{text}")


def simple_statements_page(url: str) -> str:
    """simple_stmts.html from the raise statement on, in document order."""
    body = "\n\n".join(_topic(name) for name in ("raise", "break", "continue", "import"))
    crumbs = f"Python {PY_VERSION} documentation » The Python Language Reference » 7. Simple statements"
    return _page(f"7. Simple statements — Python {PY_SHORT} documentation", url, f"{crumbs}\n\n{body}")


def github_source_page(relpath: str, url: str, start_line: int = 1) -> str:
    """A GitHub blob view of a CPython standard-library file, from *start_line* on."""
    source = stdlib_source(relpath)
    lines = source.splitlines()
    size = len(source.encode()) / 1024
    loc = sum(1 for line in lines if line.strip())
    header = (
        f"python/cpython · Lib/{relpath} · branch {PY_SHORT}\n"
        f"{len(lines)} lines ({loc} loc) · {size:.1f} KB\n"
    )
    code = "\n".join(f"{n:>5}  {line}" for n, line in enumerate(lines[start_line - 1 :], start_line))
    return _page(f"cpython/Lib/{relpath} at {PY_SHORT} · python/cpython · GitHub", url, header + "\n" + code)


def contextlib_docs_page(url: str) -> str:
    """docs.python.org/3/library/contextlib.html, assembled from the module's docstrings."""
    import contextlib

    intro = para(
        """
        contextlib — Utilities for with-statement contexts

        Source code: Lib/contextlib.py

        This module provides utilities for common tasks involving the with statement. For more
        information see also Context Manager Types and With Statement Context Managers.

        Utilities

        Functions and classes provided:
        """
    )
    sections = [intro]
    for name in contextlib.__all__:
        obj = getattr(contextlib, name)
        try:
            signature = str(inspect.signature(obj))
        except (TypeError, ValueError):
            signature = "()"
        doc = inspect.getdoc(obj) or ""
        if name == "suppress":
            doc += "\n\n" + para(
                """
                If the code within the with block raises a BaseExceptionGroup, suppressed exceptions are
                removed from the group. Any exceptions of the group which are not suppressed are re-raised
                in a new group which is created using the original group's derive() method.

                New in version 3.4.

                Changed in version 3.12: suppress now supports suppressing exceptions raised as part of a
                BaseExceptionGroup.
                """
            )
        kind = "class" if inspect.isclass(obj) else "function"
        sections.append(f"{kind} contextlib.{name}{signature}\n\n{textwrap.indent(doc, '    ')}\n")
    crumbs = "Python 3.13 documentation » The Python Standard Library » Python Runtime Services"
    return _page("contextlib — Utilities for with-statement contexts — Python 3.13 documentation", url,
                 crumbs + "\n\n" + "\n".join(sections))


def _demo_traceback(source: str, filename: str) -> str:
    """Run a small demo and return the traceback Python prints for it."""
    import linecache
    import traceback

    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        exec(compile(source, filename, "exec"), {"__name__": "__main__"})
    except BaseException as exc:  # noqa: BLE001 - we want whatever the demo raises
        return "".join(traceback.format_exception(exc)).rstrip()
    finally:
        linecache.cache.pop(filename, None)
    return ""


def _disassembly(source: str, name: str) -> str:
    """dis output for function *name* defined in *source* (no memory addresses)."""
    import io

    namespace: dict[str, Any] = {}
    exec(compile(source, "example.py", "exec"), namespace)
    out = io.StringIO()
    dis.dis(namespace[name], file=out)
    return out.getvalue().rstrip()


EXIT_RAISES_DEMO = dedent(
    """
    class Connection:
        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc, tb):
            raise ConnectionError("rollback failed: connection reset")

    with Connection() as conn:
        raise ValueError("invalid row 17")
    """
)

SO_PAGE = """
Exception raised in __exit__ hides the original exception - how do I keep both?
Asked 6 years, 2 months ago · Modified 1 year, 4 months ago · Viewed 31k times

Question (score 47)

I have a context manager around a database transaction. When the body of the `with` fails, `__exit__`
tries to roll back, and sometimes the rollback itself fails because the connection is already gone.
In the logs I then only see the rollback error, and the actual error from my code seems to be lost:

```
{demo_source}
```

Output:

```
{demo_output}
```

Is the ValueError really gone? Is there a way to make `__exit__` re-raise the *original* exception
instead, or at least log both? I'm on Python 3.

python · exception · contextmanager · with-statement

Answer (accepted, score 71)

Nothing is lost - look at the middle of the traceback. Because `__exit__` runs *while the ValueError is
being handled*, any exception raised inside it gets the ValueError attached as its `__context__`
(implicit exception chaining, PEP 3134, Python 3.0+). The "During handling of the above exception,
another exception occurred:" line is how the default traceback printer shows that chain. Your logging
probably only prints `str(exc)` or `exc.args`, which is why you only see the second error. Use
`logger.exception(...)` or `traceback.format_exception(exc)` and you will get both.

The rules for `with`, spelled out in the language reference (section "The with statement"):

- If the body raises, `__exit__` is called with the exception type, value and traceback.
- If `__exit__` returns a true value, the exception is suppressed and execution continues after the
  `with` statement.
- If it returns a false value (including `None`), the original exception is re-raised.
- If `__exit__` *itself raises*, that new exception replaces the original one; the original survives
  only as `new_exc.__context__`.

So the answer to "which exception propagates" is always: the one raised last. If you want the body's
exception to win, don't let the cleanup error escape:

```python
def __exit__(self, exc_type, exc, tb):
    try:
        self.rollback()
    except Exception as cleanup_error:
        if exc is None:
            raise              # nothing else went wrong: the cleanup error is the real error
        log.warning("rollback failed while handling %r", exc, exc_info=cleanup_error)
    return False               # re-raise the original exception
```

If you want to keep both exceptions as first-class errors (not one hidden in `__context__`), on 3.11+
you can raise an `ExceptionGroup("transaction failed", [exc, cleanup_error])`, but then every caller
has to handle groups with `except*`, so I would only do that in frameworks.

Two related details:

- `raise NewError(...) from err` sets `__cause__` (explicit chaining) and the traceback says
  "The above exception was the direct cause of the following exception:" instead.
- `raise NewError(...) from None` sets `__suppress_context__ = True` (PEP 415, Python 3.3), which
  hides the context in the traceback. The `__context__` attribute is still set, so debuggers can see it.

Comment: Worth adding that `contextlib.ExitStack` does the same thing for a whole stack of callbacks and
even fixes up `__context__` so the chain looks as if the `with` statements were nested. - mkrieger
Comment: Great answer. The logging part was exactly my problem: I used `log.error(str(e))`. - OP
"""

BLOG_PAGE = """
What a with statement compiles to
Posted on 14 March 2023 · 9 minute read · Tags: python, cpython, bytecode

A few weeks ago a colleague asked why a `return` inside a `with` block still closes the file. The
answer is in PEP 343 and the language reference, but it is more satisfying to look at what the
compiler actually emits. All listings below were produced with CPython {py_version}.

## The function

```python
{source}
```

## The bytecode

```
{disassembly}
```

## Reading it

`BEFORE_WITH` looks up `__enter__` and `__exit__` on the *type* of the context manager (not the
instance - special methods are looked up on the type), pushes the bound `__exit__` and calls
`__enter__`. Everything up to the `RETURN_VALUE` is the "happy path": on a normal exit the compiler
inlines a call `__exit__(None, None, None)` right before returning, which is why `return` inside
`with` still runs the cleanup.

The exceptional path is not visible as jumps at all. Since 3.11, CPython uses "zero-cost" exception
handling: instead of `SETUP_WITH`/`SETUP_FINALLY` instructions that pushed blocks at run time, the
code object carries an *exception table* (the `ExceptionTable:` section above) that maps ranges of
instructions to handlers. If anything in the protected range raises, the interpreter jumps to the
handler, which:

1. pushes the exception (`PUSH_EXC_INFO` - this is what makes it the "currently handled" exception,
   so anything raised from now on gets it as `__context__`),
2. calls `__exit__(type, value, traceback)` via `WITH_EXCEPT_START`,
3. tests the result (`POP_JUMP_IF_TRUE`): a true value means "suppress", and execution continues
   after the `with` statement; otherwise `RERAISE` re-raises the original exception.

If `__exit__` raises in step 2, there is nothing special to do: the new exception simply propagates
from `WITH_EXCEPT_START`, and because the original exception is still the one being handled (step 1),
the new one gets `__context__` set to it automatically. That is the whole mechanism behind the
familiar "During handling of the above exception, another exception occurred".

## Compared with the PEP 343 translation

PEP 343 specified the statement as a source-to-source translation using `try`/`except`/`finally`
and `sys.exc_info()`. The bytecode is a faithful, faster implementation of exactly that: `__exit__`
is looked up before `__enter__` is called, `__exit__` is called with the exception details on the
error path and with three `None`s otherwise, and a truthy return value swallows the exception.

One difference people trip over: the translation in the PEP calls `exit(mgr, *sys.exc_info())`
inside an `except:` clause, so, exactly like the bytecode, an exception in `__exit__` is raised
*while handling* the body's exception, and chaining applies. Nothing in the statement itself
"merges" the two exceptions; that only became possible as a library feature with exception groups
in 3.11.

## Further reading

- PEP 343 - The "with" Statement
- The Python Language Reference, section 8.5 "The with statement"
- Python 3.11 What's New: "Faster CPython" (zero-cost exceptions)
"""

PEP_343_PAGE = """
PEP 343 – The “with” Statement
Author: Guido van Rossum, Alyssa Coghlan
Status: Final
Type: Standards Track
Created: 13-May-2005
Python-Version: 2.5

Abstract

This PEP adds a new statement "with" to the Python language to make it possible to factor out
standard uses of try/finally statements.

In this PEP, context managers provide __enter__() and __exit__() methods that are invoked on entry
to and exit from the body of the with statement.

Author's Note

This PEP was originally written in first person by Guido, and subsequently updated by Alyssa
(Nick) Coghlan to reflect later discussion on python-dev. Any first person references are from
Guido's original.

Python's alpha release cycle revealed terminology problems in this PEP and in the associated
documentation and implementation. The PEP stabilised around the time of the first Python 2.5 beta
release.

Introduction

After a lot of discussion about PEP 340 and alternatives, I decided to withdraw PEP 340 and
proposed a slight variant on PEP 310. After more discussion, I have added back a mechanism for
raising an exception in a suspended generator using a throw() method, and a close() method which
throws a new GeneratorExit exception; these additions were first proposed on python-dev and
universally approved of. I'm also changing the keyword to 'with'.

Motivation and Summary

PEP 340, Anonymous Block Statements, combined many powerful ideas: using generators as block
templates, adding exception handling and finalization to generators, and more. Besides praise it
received a lot of opposition from people who didn't like the fact that it was, under the covers, a
(potential) looping construct. This meant that break and continue in a block-statement would break
or continue the block-statement, even if it was used as a non-looping resource management tool.

PEP 310 proposed a simpler "with" statement for the common case. After discussion, the exception
handling aspect was added: the __exit__() method receives the exception details, and it is allowed
to "swallow" the exception by returning a true value.

Specification: The 'with' Statement

The syntax is:

    with EXPR as VAR:
        BLOCK

The translation of the above statement is:

    mgr = (EXPR)
    exit = type(mgr).__exit__  # Not calling it yet
    value = type(mgr).__enter__(mgr)
    exc = True
    try:
        try:
            VAR = value  # Only if "as VAR" is present
            BLOCK
        except:
            # The exceptional case is handled here
            exc = False
            if not exit(mgr, *sys.exc_info()):
                raise
            # The exception is swallowed if exit() returns true
    finally:
        # The normal and non-local-goto cases are handled here
        if exc:
            exit(mgr, None, None, None)

Here, the lowercase variables (mgr, exit, value, exc) are internal variables and not accessible to
the user; they will most likely be implemented as special registers or stack positions.

The details of the above translation are intended to prescribe the exact semantics. If either of
the relevant methods are not found as expected, the interpreter will raise AttributeError, in the
order that they are tried (__exit__, __enter__). Similarly, if any of the calls raises an
exception, the effect is exactly as it would be in the above code. Finally, if BLOCK contains a
break, continue or return statement, the __exit__() method is called with three None arguments just
as if BLOCK completed normally. (I.e. these "pseudo-exceptions" are not considered exceptions by
__exit__().)

If the "as VAR" part of the syntax is omitted, the "VAR =" part of the translation is omitted (but
mgr.__enter__() is still called).

The calling convention for mgr.__exit__() is as follows. If the finally-suite was reached through
normal completion of BLOCK or through a non-local goto (a break, continue or return statement in
BLOCK), mgr.__exit__() is called with three None arguments. If the finally-suite was reached through
an exception raised in BLOCK, mgr.__exit__() is called with three arguments representing the
exception type, value, and traceback.

IMPORTANT: if mgr.__exit__() returns a "true" value, the exception is "swallowed". That is, if it
returns "true", execution continues at the next statement after the with-statement, even if an
exception happened inside the with-statement. However, if the with-statement was left via a
non-local goto (break, continue or return), this non-local return is resumed when mgr.__exit__()
returns regardless of the return value. The motivation for this detail is to make it possible for
mgr.__exit__() to swallow exceptions, without making it too easy (since the default return value,
None, is false and this causes the exception to be re-raised). The main use case for swallowing
exceptions is to make it possible to write the @contextmanager decorator so that a try/except block
in a decorated generator behaves exactly as if the body of the generator were expanded in-line at
the place of the with-statement.

The motivation for passing the exception details to __exit__(), as opposed to the argument-less
__exit__() from PEP 310, was given by the transactional() use case, example 3 below. The template in
that example must commit or roll back the transaction depending on whether an exception occurred or
not. Rather than just having a boolean flag indicating whether an exception occurred, we pass the
complete exception information, for the benefit of an exception-logging facility for example.
Relying on sys.exc_info() to get at the exception information was rejected; sys.exc_info() has very
complex semantics and it is perfectly possible that it returns the exception information for an
exception that was caught ages ago.

It is also proposed that the __exit__() method should not re-raise the passed-in exception: if an
exception is passed in, __exit__() should return a false value to indicate that the exception
should propagate. Raising a different exception from within __exit__() replaces the original
exception and is reserved for cases where __exit__() itself failed.

Generator Decorator

With PEP 342 accepted, it is possible to write a decorator that makes it possible to use a generator
that yields exactly once to control a with-statement. Here's a sketch of such a decorator:

    class GeneratorContextManager(object):

       def __init__(self, gen):
           self.gen = gen

       def __enter__(self):
           try:
               return self.gen.next()
           except StopIteration:
               raise RuntimeError("generator didn't yield")

       def __exit__(self, type, value, traceback):
           if type is None:
               try:
                   self.gen.next()
               except StopIteration:
                   return
               else:
                   raise RuntimeError("generator didn't stop")
           else:
               try:
                   self.gen.throw(type, value, traceback)
                   raise RuntimeError("generator didn't stop after throw()")
               except StopIteration:
                   return True
               except:
                   # only re-raise if it's *not* the exception that was
                   # passed to throw(), because __exit__() must not raise
                   # an exception unless __exit__() itself failed.  But
                   # throw() has to raise the exception to signal
                   # propagation, so this fixes the impedance mismatch
                   # between the throw() protocol and the __exit__()
                   # protocol.
                   #
                   if sys.exc_info()[1] is not value:
                       raise

    def contextmanager(func):
       def helper(*args, **kwds):
           return GeneratorContextManager(func(*args, **kwds))
       return helper

This decorator could be used as follows:

    @contextmanager
    def opening(filename):
       f = open(filename) # IOError is untouched by GeneratorContext
       try:
           yield f
       finally:
           f.close() # Ditto for errors here (however unlikely)

A robust implementation of this decorator will be made part of the standard library.

Context Managers in the Standard Library

It would be possible to endow certain objects, like files, sockets, and locks, with __enter__() and
__exit__() methods so that instead of writing:

    with locking(myLock):
        BLOCK

one could write simply:

    with myLock:
        BLOCK

I think we should be careful with this; it could lead to mistakes like:

    f = open(filename)
    with f:
        BLOCK1
    with f:
        BLOCK2

which does not do what one might think (f is closed before BLOCK2 is entered).

Resolved Issues

The following issues were resolved by BDFL approval (and a lack of any major objections on
python-dev).

1. What exception should GeneratorContextManager raise when the underlying generator-iterator
   misbehaves? The following quote is the reason behind Guido's choice of RuntimeError for both
   this and for the generator close() method in PEP 342: "I'd rather not introduce a new exception
   class just for this purpose, since it's not an exception that I want people to catch".
2. It is fine to raise AttributeError instead of TypeError if the necessary methods aren't present
   on an object passed to the with statement.
3. Objects with __enter__/__exit__ methods are called "context managers", and the decorator that
   converts a generator function into a context manager factory is contextlib.contextmanager.

Copyright

This document has been placed in the public domain.
"""

PEP_3134_PAGE = """
PEP 3134 – Exception Chaining and Embedded Tracebacks
Author: Ka-Ping Yee
Status: Final
Type: Standards Track
Created: 12-May-2005
Python-Version: 3.0

Numbering Note

This PEP started its life as PEP 344. Since it is now targeted for Python 3000, it has been
renumbered into the 3xxx space.

Abstract

This PEP proposes three standard attributes on exception instances: the __context__ attribute for
implicitly chained exceptions, the __cause__ attribute for explicitly chained exceptions, and the
__traceback__ attribute for the traceback. A new raise ... from statement sets the __cause__
attribute.

Motivation

During the handling of one exception (exception A), it is possible that another exception
(exception B) may occur. In today's Python (version 2.4), if this happens, exception B is
propagated outward and exception A is lost. In order to debug the problem, it is useful to know
about both exceptions. The __context__ attribute retains this information automatically.

Sometimes it can be useful for an exception handler to intentionally re-raise an exception, either
to provide extra information or to translate an exception to another type. The __cause__ attribute
provides an explicit way to record the direct cause of an exception.

In today's Python implementation, exceptions are composed of three parts: the type, the value, and
the traceback. The sys module, exposes the current exception in three parallel variables,
exc_type, exc_value, and exc_traceback, the sys.exc_info() function returns a tuple of these three
parts, and the raise statement has a three-argument form accepting these three parts. Manipulating
exceptions often requires passing these three things in parallel, which can be tedious and
error-prone. Additionally, the except statement can only provide access to the value, not the
traceback. Adding the __traceback__ attribute to exception values makes all the exception
information accessible from a single place.

Rationale

The Python-Dev discussions revealed interest in exception chaining for two quite different
purposes. To handle the unexpected raising of a secondary exception, the exception must be
retained implicitly. To support intentional translation of an exception, there must be a way to
chain exceptions explicitly. This PEP addresses both.

Several attribute names for chained exceptions have been suggested on Python-Dev, including cause,
antecedent, reason, original, chain, chainedexc, exc_chain, excprev, previous, and precursor. For an
explicitly chained exception, this PEP suggests __cause__ because of its specific meaning. For an
implicitly chained exception, this PEP proposes the name __context__ because the intended meaning is
more specific than temporal precedence but less specific than causation: an exception occurs in the
context of handling another exception.

This PEP suggests names with leading and trailing double-underscores for these three attributes
because they are set by the Python VM. Only in very special cases should they be set by normal
assignment.

This PEP handles exceptions that occur during except blocks and finally blocks in the same way.
Reading the traceback makes it clear where the exceptions occurred, so additional mechanisms for
distinguishing the two cases would only add unnecessary complexity.

This PEP proposes that the outermost exception object (the one exposed for matching by except
clauses) be the most recently raised exception for compatibility with current behaviour.

This PEP proposes that tracebacks display the outermost exception last, because this would be
consistent with the chronological order of tracebacks (from oldest to most recent frame) and
because the actual thrown exception is easier to find on the last line.

Implicit Exception Chaining

Here is an example to illustrate the __context__ attribute:

    def compute(a, b):
        try:
            a/b
        except Exception, exc:
            log(exc)

    def log(exc):
        file = open('logfile.txt')  # oops, forgot the 'w'
        print >>file, exc
        file.close()

Calling compute(0, 0) causes a ZeroDivisionError. The compute() function catches this exception and
calls log(exc), but the log() function also raises an exception when it tries to write to a file
that wasn't opened for writing.

In today's Python, the caller of compute() gets thrown an IOError. The ZeroDivisionError is lost.
With the proposed change, the instance of IOError has an additional __context__ attribute that
retains the ZeroDivisionError.

Explicit Exception Chaining

The __cause__ attribute on exception objects is always initialized to None. It is set by a new form
of the raise statement:

    raise EXCEPTION from CAUSE

which is equivalent to:

    exc = EXCEPTION
    exc.__cause__ = CAUSE
    raise exc

In the following example, a database provides implementations for a few different kinds of
storage, with file storage as one kind. The database designer wants errors to propagate as
DatabaseError objects so that the client doesn't have to be aware of the storage-specific details,
but doesn't want to lose the underlying error information.

    class DatabaseError(Exception):
        pass

    class FileDatabase(Database):
        def __init__(self, filename):
            try:
                self.file = open(filename)
            except IOError, exc:
                raise DatabaseError('failed to open') from exc

If the call to open() raises an exception, the problem will be reported as a DatabaseError, with a
__cause__ attribute that reveals the IOError as the original cause.

Enhanced Reporting

The default exception handler will be modified to report chained exceptions. The chain of
exceptions is traversed by following the __cause__ and __context__ attributes, with __cause__ taking
priority. In keeping with the chronological order of tracebacks, the most recently raised exception
is displayed last; that is, the display begins with the description of the innermost exception and
backs up the chain to the outermost exception. The tracebacks are formatted as usual, with one of
the lines:

    The above exception was the direct cause of the following exception:

or

    During handling of the above exception, another exception occurred:

between tracebacks, depending whether they are linked by __cause__ or __context__ respectively.

The traceback module will also be updated to handle chained exceptions.

Possible Future Compatible Changes

These changes are consistent with the appearance of exceptions as a single object rather than a
triple at the interpreter level.

- If PEP 340 or PEP 343 is accepted, replace the three (type, value, traceback) arguments to __exit__
  with a single exception argument.
- Deprecate sys.exc_type, sys.exc_value, sys.exc_traceback, and sys.exc_info() in favour of a single
  member, sys.exception.

Acknowledgements

Brett Cannon, Greg Ewing, Guido van Rossum, Jeremy Hylton, Phillip J. Eby, Raymond Hettinger, Walter
Dörwald, and others.

Copyright

This document has been placed in the public domain.
"""

PEP_654_PAGE = """
PEP 654 – Exception Groups and except*
Author: Irit Katriel, Yury Selivanov, Guido van Rossum
Status: Final
Type: Standards Track
Created: 22-Feb-2021
Python-Version: 3.11

Abstract

This document proposes language extensions that allow programs to raise and handle multiple
unrelated exceptions simultaneously:

- A new standard exception type, the ExceptionGroup, which represents a group of unrelated
  exceptions being propagated together.
- A new syntax except* for handling ExceptionGroups.

Motivation

The interpreter is currently able to propagate at most one exception at a time. The chaining
features introduced in PEP 3134 link together exceptions that are related to each other as the
cause or context, but there are situations where multiple unrelated exceptions need to be propagated
together as the stack unwinds. Several real world use cases are listed below.

- Concurrent errors. Libraries for async concurrency provide APIs to invoke multiple tasks and
  return their results in aggregate. There isn't currently a good way for such libraries to handle
  situations where multiple tasks raise exceptions. The Python standard library's asyncio.gather()
  function provides two options: raise the first exception, or return the exceptions in the results
  list. The Trio library has a MultiError exception type which it raises to report a collection of
  errors.
- Multiple failures when retrying an operation. The Python standard library's
  socket.create_connection function may attempt to connect to different addresses, and if all
  attempts fail it needs to report that to the user. It is an open issue how to aggregate these
  errors.
- Multiple user callbacks fail. Python's atexit.register() function allows users to register
  functions that are called on system exit. If any of them raise exceptions, only the last one is
  reraised, but it would be better to reraise all of them together.
- Multiple errors in a complex calculation. The Hypothesis library performs automatic bug reduction
  (simplifying code that demonstrates a bug). In the process it may find variations that generate
  different errors, and (optionally) reports all of them.
- Errors in wrapper code. The Python standard library's tempfile.TemporaryDirectory context manager
  had an issue where an exception raised during cleanup in __exit__ effectively masked an exception
  that the user's code raised inside the context manager scope. While the user's exception was
  chained as the __context__ of the cleanup error, it was not caught by the user's except clause.

Rationale

Grouping several exceptions together can be done without changes to the language, simply by
creating a container exception type. Trio is an example of a library that has made use of this
technique in its MultiError type. However, such an approach requires calling code to catch the
container exception type, and then to inspect it to determine the types of errors that had
occurred, extract the ones it wants to handle, and reraise the rest. Furthermore, exceptions in
Python have important information attached to their __traceback__, __cause__ and __context__
fields, and designing a container type that preserves the integrity of this information requires
care; it is not as simple as collecting exceptions into a set.

Changes to the language are required in order to extend support for exception groups in the style
of existing exception handling mechanisms. At the very least we would like to be able to catch an
exception group only if it contains an exception of a type that we choose to handle. Exceptions of
other types in the same group need to be automatically reraised, otherwise it is too easy for user
code to inadvertently swallow exceptions that it is not handling.

Specification

ExceptionGroup and BaseExceptionGroup

We propose to add two new builtin exception types: BaseExceptionGroup(BaseException) and
ExceptionGroup(BaseExceptionGroup, Exception). They are assignable to Exception.__cause__ and
Exception.__context__, and they can be raised and handled as any exception with raise ExceptionGroup(...)
and try: ... except ExceptionGroup: ... or raise BaseExceptionGroup(...) and try: ... except
BaseExceptionGroup: ....

Both have a constructor that takes two positional-only arguments: a message string and a sequence of
the nested exceptions, which are exposed in the fields message and exceptions. For example:
ExceptionGroup('issues', [ValueError('bad value'), TypeError('bad type')]). The difference between
them is that ExceptionGroup can only wrap Exception subclasses while BaseExceptionGroup can wrap any
BaseException subclass. The BaseExceptionGroup constructor inspects the nested exceptions and if
they are all Exception subclasses, it returns an ExceptionGroup rather than a BaseExceptionGroup.

The ExceptionGroup API

The subgroup(condition) method gives us a way to obtain an exception group that has the same
metadata (message, cause, context, traceback) as the original group, and the same nested structure
of groups, but contains only those exceptions for which the condition is true. The split(condition)
method is similar, but returns a pair: the first is the subgroup of matching exceptions and the
second is the rest. The derive(excs) method is used by subgroup and split to create new instances of
the right type and can be overridden by subclasses.

Traceback Representation

We extend the traceback module's TracebackException class and the interpreter's default exception
display so that nested exceptions are rendered as an indented tree, with "+-+-----" markers for each
nested exception, and chained exceptions (__cause__/__context__) rendered as before inside each
branch.

except*

We're proposing to introduce a new variant of the try..except syntax to simplify working with
exception groups. The * symbol indicates that multiple exceptions can be handled by each except*
clause:

    try:
        ...
    except* SpamError:
        ...
    except* FooError as e:
        ...
    except* (BarError, BazError) as e:
        ...

In a traditional try-except statement there is only one exception to handle, so the body of at most
one except clause executes; the first one that matches the exception. With the new syntax, an
except* clause can match a subgroup of the exception group that was raised, while the remaining part
is matched by following except* clauses. In other words, a single exception group can cause several
except* clauses to execute, but each such clause executes at most once (for all matching exceptions
from the group) and each exception is either handled by exactly one clause (the first one that
matches its type) or is reraised at the end. The manner in which each exception is handled by a
try-except* block is independent of any other exceptions in the group.

Raising exceptions in an except* block: exceptions raised inside an except* clause, together with
the unhandled exceptions of the original group, are combined into a new group that propagates out of
the try statement; a raised exception keeps the matched subgroup as its __context__, just like
exceptions raised in a normal except clause.

Forbidden combinations: it is not possible to use both traditional except blocks and the new except*
clauses in the same try statement; an except* clause must name at least one type (a bare except* is
a syntax error); and an except* clause whose type is an exception group type (for example except*
ExceptionGroup) raises a TypeError at runtime, because it would be ambiguous. continue, break and
return are disallowed in except* clauses, causing a SyntaxError.

Backwards Compatibility

Backwards compatibility was a requirement of our design, and the changes we propose in this PEP will
not break any existing code: the addition of the new builtin exception types ExceptionGroup and
BaseExceptionGroup does not impact existing programs, and the way that existing exceptions are
handled and displayed does not change in any way. However, code that catches Exception will now
also catch an ExceptionGroup, which only contains Exception subclasses by construction.

Copyright

This document is placed in the public domain or under the CC0-1.0-Universal license, whichever is
more permissive.
"""

WHATSNEW_311_PAGE = """
What's New In Python 3.11
Editor: Pablo Galindo Salgado

This article explains the new features in Python 3.11, compared to 3.10. Python 3.11 was released on
October 24, 2022.

Summary – Release highlights

- Python 3.11 is between 10-60% faster than Python 3.10. On average, we measured a 1.25x speedup on
  the standard benchmark suite. See Faster CPython for details.

New syntax features:
- PEP 654: Exception Groups and except*

New built-in features:
- PEP 678: Exceptions can be enriched with notes

New standard library modules:
- PEP 680: tomllib — Support for parsing TOML in the Standard Library

Interpreter improvements:
- PEP 657: Fine-grained error locations in tracebacks
- New -P command line option and PYTHONSAFEPATH environment variable to disable automatically
  prepending potentially unsafe paths to sys.path

New Features

PEP 657: Fine-grained error locations in tracebacks

When printing tracebacks, the interpreter will now point to the exact expression that caused the
error, instead of just the line.

PEP 654: Exception Groups and except*

PEP 654 introduces language features that enable a program to raise and handle multiple unrelated
exceptions simultaneously. The builtin types ExceptionGroup and BaseExceptionGroup make it possible
to group exceptions and raise them together, and the new except* syntax generalizes except to match
subgroups of exception groups.

See PEP 654 for more details.

(Contributed by Irit Katriel in bpo-45292. PEP written by Irit Katriel, Yury Selivanov and Guido van
Rossum.)

PEP 678: Exceptions can be enriched with notes

The add_note() method is added to BaseException. It can be used to enrich exceptions with context
information that is not available at the time when the exception is raised. The added notes appear
in the default traceback.

See PEP 678 for more details.

(Contributed by Irit Katriel in bpo-45607. PEP written by Zac Hatfield-Dodds.)

Improved Modules

asyncio

- Added the TaskGroup class, an asynchronous context manager holding a group of tasks that will
  wait for all of them upon exit. For new code this is recommended over using create_task() and
  gather() directly. (Contributed by Yury Selivanov and others in gh-90908.)
- Added timeout(), an asynchronous context manager for setting a timeout on asynchronous operations.
  For new code this is recommended over using wait_for() directly.

contextlib

- Added non parallel-safe chdir() context manager to change the current working directory and then
  restore it on exit. Simple wrapper around chdir(). (Contributed by Filipe Laíns in bpo-25625)

traceback

- Add traceback.StackSummary.format_frame_summary() to allow users to override which frames appear
  in the traceback, and how they are formatted.
- Add traceback.TracebackException.print(), which prints the formatted TracebackException instance
  to a file.

Faster CPython

"Zero-cost" exceptions

The cost of try statements is almost eliminated when no exception is raised. (Contributed by Mark
Shannon in bpo-40222.)

Cheaper, lazy Python frames

Python frames, holding execution information, are created whenever Python calls a Python function.
The following are new frame optimizations: streamlined the frame creation process; avoided memory
allocation by generously re-using frame space on the C stack; streamlined the internal frame struct
to contain only essential information.

CPython bytecode changes

New opcodes

- ASYNC_GEN_WRAP, RETURN_GENERATOR and SEND, used in generators and co-routines.
- COPY_FREE_VARS, which avoids needing special caller-side code for closures.
- JUMP_BACKWARD_NO_INTERRUPT, for use in certain loops where handling interrupts is undesirable.
- MAKE_CELL, to create Cell Objects.
- CHECK_EG_MATCH and PREP_RERAISE_STAR, to handle the new exception groups and except* added in
  PEP 654.
- PUSH_EXC_INFO, for use in exception handlers.
- RESUME, a no-op, for internal tracing, debugging and optimization checks.

Replaced opcodes

- Replaced SETUP_WITH and SETUP_ASYNC_WITH with BEFORE_WITH (and BEFORE_ASYNC_WITH for the async
  variant). The exception handling that SETUP_WITH used to set up is now described by the code
  object's exception table.
- Removed SETUP_FINALLY, POP_BLOCK and the other block-stack instructions; "zero-cost" exception
  handling uses the exception table instead.
"""


# ---------------------------------------------------------------------------
# Sample 2: the research agent -- search index, tools and conversation
# ---------------------------------------------------------------------------

DOCS = "https://docs.python.org/3"
GH = f"https://github.com/python/cpython/blob/{PY_SHORT}/Lib"
SO_URL = "https://stackoverflow.com/questions/48162305/exception-raised-in-exit-hides-the-original-exception"
BLOG_URL = "https://www.pybytes.dev/posts/2023/what-a-with-statement-compiles-to/"

#: One entry per query: (title, url, snippet) in ranking order.
SEARCH_RESULTS: dict[str, list[tuple[str, str, str]]] = {
    "python with statement __exit__ raises exception original exception": [
        ("Exception raised in __exit__ hides the original exception - Stack Overflow", SO_URL,
         "When the body of my with block fails, __exit__ tries to roll back and the rollback fails too. "
         "I only see the rollback error in the logs - is the original exception lost?"),
        ("8. Compound statements — Python 3 documentation", f"{DOCS}/reference/compound_stmts.html#the-with-statement",
         "The with statement is used to wrap the execution of a block with methods defined by a context "
         "manager ... If the suite was exited due to an exception, and the return value from the __exit__() "
         "method was false, the exception is reraised."),
        ("3. Data model — Python 3 documentation", f"{DOCS}/reference/datamodel.html#context-managers",
         "object.__exit__(self, exc_type, exc_value, traceback): Exit the runtime context related to this "
         "object ... Note that __exit__() methods should not reraise the passed-in exception; this is the "
         "caller's responsibility."),
        ("What a with statement compiles to - pybytes", BLOG_URL,
         "BEFORE_WITH, WITH_EXCEPT_START and the exception table: a walk through the bytecode CPython "
         "emits for a with statement, and why a failing __exit__ chains the original exception."),
        ("PEP 343 – The “with” Statement | peps.python.org", "https://peps.python.org/pep-0343/",
         "This PEP adds a new statement 'with' to the Python language to make it possible to factor out "
         "standard uses of try/finally statements."),
        ("Python: exception in __exit__ swallows exception from with body? - Reddit",
         "https://www.reddit.com/r/learnpython/comments/9xk2ub/exception_in_exit_swallows_exception/",
         "The exception isn't swallowed, it's chained - read the whole traceback, there's a 'During "
         "handling of the above exception' section..."),
    ],
    "PEP 343 with statement specification translation": [
        ("PEP 343 – The “with” Statement | peps.python.org", "https://peps.python.org/pep-0343/",
         "The translation of the above statement is: mgr = (EXPR); exit = type(mgr).__exit__ # Not calling "
         "it yet; value = type(mgr).__enter__(mgr) ..."),
        ("PEP 340 – Anonymous Block Statements | peps.python.org", "https://peps.python.org/pep-0340/",
         "This PEP proposes a new type of compound statement which can be used for resource management "
         "purposes. Rejected in favour of PEP 343."),
        ("PEP 310 – Reliable Acquisition/Release Pairs | peps.python.org", "https://peps.python.org/pep-0310/",
         "This PEP would add a new statement to Python for reliable acquisition and release of resources. "
         "Superseded by PEP 343."),
        ("What's New in Python 2.5 — Python 3 documentation", f"{DOCS}/whatsnew/2.5.html#pep-343-the-with-statement",
         "The 'with' statement clarifies code that previously would use try...finally blocks to ensure that "
         "clean-up code is executed. In 2.5 it requires 'from __future__ import with_statement'."),
        ("8. Compound statements — Python 3 documentation", f"{DOCS}/reference/compound_stmts.html#the-with-statement",
         "The following code: with EXPRESSION as TARGET: SUITE is semantically equivalent to: manager = "
         "(EXPRESSION); enter = type(manager).__enter__ ..."),
    ],
    "PEP 3134 exception chaining __context__ __cause__": [
        ("PEP 3134 – Exception Chaining and Embedded Tracebacks | peps.python.org",
         "https://peps.python.org/pep-3134/",
         "This PEP proposes three standard attributes on exception instances: the __context__ attribute for "
         "implicitly chained exceptions, the __cause__ attribute for explicitly chained exceptions, and the "
         "__traceback__ attribute."),
        ("7. Simple statements — Python 3 documentation", f"{DOCS}/reference/simple_stmts.html#the-raise-statement",
         "The from clause is used for exception chaining ... A similar mechanism works implicitly if a new "
         "exception is raised when an exception is already being handled."),
        ("PEP 415 – Implement context suppression with exception attributes | peps.python.org",
         "https://peps.python.org/pep-0415/",
         "raise exc from None ... sets __suppress_context__ to True. Supersedes the implementation part of "
         "PEP 409. Python-Version: 3.3"),
        ("Built-in Exceptions — Python 3 documentation", f"{DOCS}/library/exceptions.html#exception-context",
         "When raising a new exception while another exception is already being handled, the new "
         "exception's __context__ attribute is automatically set to the handled exception."),
        ("4. Execution model — Python 3 documentation", f"{DOCS}/reference/executionmodel.html#exceptions",
         "Exceptions are a means of breaking out of the normal flow of control of a code block in order to "
         "handle errors or other exceptional conditions."),
    ],
    "contextlib ExitStack callback raises exception context chaining": [
        ("contextlib — Utilities for with-statement contexts — Python 3 documentation",
         f"{DOCS}/library/contextlib.html",
         "ExitStack: A context manager that is designed to make it easy to programmatically combine other "
         "context managers and cleanup functions ... callbacks are invoked in LIFO order."),
        ("cpython/Lib/contextlib.py at main · python/cpython · GitHub", f"{GH}/contextlib.py",
         "def _fix_exception_context(new_exc, old_exc): # Context may not be correct, so find the end of "
         "the chain ..."),
        ("cpython/Lib/test/test_contextlib.py · python/cpython · GitHub", f"{GH}/test/test_contextlib.py",
         "def test_exit_exception_chaining_reference(self): # Sanity check to make sure that ExitStack "
         "chaining matches actual nested with statements"),
        ("ExitStack exception context not set correctly - Stack Overflow",
         "https://stackoverflow.com/questions/37395003/exitstack-exception-context",
         "Why does the traceback from ExitStack show the exceptions in the same order as nested with "
         "statements would?"),
        ("contextlib.ExitStack: practical patterns (blog)",
         "https://blog.example-dev.net/exitstack-patterns",
         "Use ExitStack when the number of resources is only known at run time; pop_all() to transfer "
         "ownership out of a constructor."),
    ],
    "PEP 654 exception groups except* python 3.11": [
        ("PEP 654 – Exception Groups and except* | peps.python.org", "https://peps.python.org/pep-0654/",
         "This document proposes language extensions that allow programs to raise and handle multiple "
         "unrelated exceptions simultaneously."),
        ("What's New In Python 3.11 — Python 3 documentation", f"{DOCS}/whatsnew/3.11.html",
         "PEP 654 introduces language features that enable a program to raise and handle multiple "
         "unrelated exceptions simultaneously. The builtin types ExceptionGroup and BaseExceptionGroup ..."),
        ("8. Compound statements — Python 3 documentation", f"{DOCS}/reference/compound_stmts.html#except-star",
         "The except* clause(s) are used for handling ExceptionGroups. The exception type for matching is "
         "interpreted as in the case of except, but in the case of exception groups we can have partial "
         "matches."),
        ("Errors and Exceptions — Python 3 tutorial", f"{DOCS}/tutorial/errors.html#raising-and-handling-multiple-unrelated-exceptions",
         "There are situations where it is necessary to report several exceptions that have occurred. This "
         "is often the case in concurrency frameworks ..."),
        ("PEP 678 – Enriching Exceptions with Notes | peps.python.org", "https://peps.python.org/pep-0678/",
         "Exception objects are typically initialized with a message ... This PEP proposes add_note()."),
    ],
    "contextlib.suppress ExceptionGroup python 3.12": [
        ("contextlib — Utilities for with-statement contexts — Python 3.13 documentation",
         f"{DOCS}/library/contextlib.html#contextlib.suppress",
         "If the code within the with block raises a BaseExceptionGroup, suppressed exceptions are removed "
         "from the group ... Changed in version 3.12: suppress now supports suppressing exceptions raised "
         "as part of a BaseExceptionGroup."),
        ("What's New In Python 3.12 — Python 3 documentation", f"{DOCS}/whatsnew/3.12.html",
         "Improved modules ... contextlib ... asyncio ... The full list of changes is in the changelog."),
        ("cpython/Lib/contextlib.py at 3.11 · python/cpython · GitHub", f"{GH}/contextlib.py#L429",
         "class suppress(AbstractContextManager): Context manager to suppress specified exceptions ..."),
        ("Does contextlib.suppress work with ExceptionGroup? - Python Discourse",
         "https://discuss.python.org/t/does-contextlib-suppress-work-with-exceptiongroup/24881",
         "On 3.11 suppress(ValueError) does not catch ExceptionGroup('x', [ValueError()]) - is that "
         "intended?"),
    ],
    "asyncio TaskGroup __aexit__ BaseExceptionGroup source": [
        ("cpython/Lib/asyncio/taskgroups.py · python/cpython · GitHub", f"{GH}/asyncio/taskgroups.py",
         "class TaskGroup: Asynchronous context manager for managing groups of tasks ... raise "
         "BaseExceptionGroup('unhandled errors in a TaskGroup', self._errors)"),
        ("Coroutines and Tasks — Python 3 documentation", f"{DOCS}/library/asyncio-task.html#task-groups",
         "The first time any of the tasks belonging to the group fails with an exception other than "
         "asyncio.CancelledError, the remaining tasks in the group are cancelled."),
        ("Trio's nurseries and structured concurrency - njs blog",
         "https://vorpus.org/blog/notes-on-structured-concurrency-or-go-statement-considered-harmful/",
         "Notes on structured concurrency, or: Go statement considered harmful."),
    ],
    "traceback 'During handling of the above exception' implementation": [
        ("cpython/Lib/traceback.py · python/cpython · GitHub", f"{GH}/traceback.py#L674",
         "_context_message = ('\\nDuring handling of the above exception, another exception occurred:\\n\\n')"),
        ("traceback — Print or retrieve a stack traceback — Python 3 documentation",
         f"{DOCS}/library/traceback.html#traceback.TracebackException",
         "__cause__: A TracebackException of the original __cause__. __context__: A TracebackException of "
         "the original __context__. __suppress_context__ ..."),
        ("Lib/test/test_with.py · python/cpython · GitHub", f"{GH}/test/test_with.py#L355",
         "class ExceptionalTestCase(ContextmanagerAssertionMixin, unittest.TestCase): def "
         "testRaisedGeneratorExit1(self) ..."),
    ],
}


def search(query: str) -> str:
    """JSON answer of the web_search tool."""
    results = [
        {"rank": rank, "title": title, "url": url, "snippet": snippet}
        for rank, (title, url, snippet) in enumerate(SEARCH_RESULTS[query], 1)
    ]
    return json.dumps({"query": query, "results": results}, indent=2, ensure_ascii=False)


def research_pages() -> dict[str, str]:
    """Every page the research agent fetches, keyed by URL."""
    ctx = stdlib_source("contextlib.py")
    tb = stdlib_source("traceback.py")
    with_tests = stdlib_source("test/test_with.py")
    ctx_tests = stdlib_source("test/test_contextlib.py")
    raise_tests = stdlib_source("test/test_raise.py")
    demo = _demo_traceback(EXIT_RAISES_DEMO, "rollback.py")
    blog_source = dedent(
        """
        def read_config(path):
            with open(path, encoding="utf-8") as fh:
                return fh.read()
        """
    )
    pages = {
        SO_URL: _page(
            "python - Exception raised in __exit__ hides the original exception - Stack Overflow",
            SO_URL,
            dedent(SO_PAGE).replace("{demo_source}", EXIT_RAISES_DEMO.rstrip()).replace("{demo_output}", demo),
        ),
        f"{DOCS}/reference/compound_stmts.html#the-with-statement": docs_reference_page(
            f"{DOCS}/reference/compound_stmts.html#the-with-statement", "8. Compound statements", "compound",
            'The "with" statement\n====',
        ),
        f"{DOCS}/reference/datamodel.html#context-managers": docs_reference_page(
            f"{DOCS}/reference/datamodel.html#context-managers", "3. Data model", "specialnames",
            "With Statement Context Managers\n",
        ),
        "https://peps.python.org/pep-0343/": _page(
            "PEP 343 – The “with” Statement | peps.python.org", "https://peps.python.org/pep-0343/",
            dedent(PEP_343_PAGE),
        ),
        BLOG_URL: _page(
            "What a with statement compiles to - pybytes", BLOG_URL,
            dedent(BLOG_PAGE)
            .replace("{py_version}", PY_VERSION)
            .replace("{source}", blog_source.rstrip())
            .replace("{disassembly}", _disassembly(blog_source, "read_config")),
        ),
        "https://peps.python.org/pep-3134/": _page(
            "PEP 3134 – Exception Chaining and Embedded Tracebacks | peps.python.org",
            "https://peps.python.org/pep-3134/", dedent(PEP_3134_PAGE),
        ),
        f"{DOCS}/reference/simple_stmts.html#the-raise-statement": simple_statements_page(
            f"{DOCS}/reference/simple_stmts.html#the-raise-statement"
        ),
        f"{DOCS}/reference/executionmodel.html#exceptions": docs_reference_page(
            f"{DOCS}/reference/executionmodel.html#exceptions", "4. Execution model", "execmodel", None,
        ),
        f"{DOCS}/library/contextlib.html": contextlib_docs_page(f"{DOCS}/library/contextlib.html"),
        f"{GH}/contextlib.py#L459": github_source_page(
            "contextlib.py", f"{GH}/contextlib.py#L459", line_of(ctx, "class _BaseExitStack:")
        ),
        f"{GH}/contextlib.py#L125": github_source_page(
            "contextlib.py", f"{GH}/contextlib.py#L125", line_of(ctx, "class _GeneratorContextManager(")
        ),
        f"{GH}/test/test_contextlib.py#L674": github_source_page(
            "test/test_contextlib.py", f"{GH}/test/test_contextlib.py#L674",
            line_of(ctx_tests, "class TestBaseExitStack:"),
        ),
        f"{GH}/test/test_with.py#L355": github_source_page(
            "test/test_with.py", f"{GH}/test/test_with.py#L355", line_of(with_tests, "class ExceptionalTestCase(")
        ),
        "https://peps.python.org/pep-0654/": _page(
            "PEP 654 – Exception Groups and except* | peps.python.org", "https://peps.python.org/pep-0654/",
            dedent(PEP_654_PAGE),
        ),
        f"{DOCS}/reference/compound_stmts.html#the-try-statement": docs_reference_page(
            f"{DOCS}/reference/compound_stmts.html#the-try-statement", "8. Compound statements", "compound",
            'The "try" statement\n====',
        ),
        f"{DOCS}/whatsnew/3.11.html": _page(
            "What’s New In Python 3.11 — Python 3 documentation", f"{DOCS}/whatsnew/3.11.html",
            dedent(WHATSNEW_311_PAGE),
        ),
        f"{DOCS}/library/contextlib.html#contextlib.suppress": contextlib_docs_page(
            f"{DOCS}/library/contextlib.html#contextlib.suppress"
        ),
        f"{GH}/contextlib.py#L429": github_source_page("contextlib.py", f"{GH}/contextlib.py#L429",
                                                        line_of(ctx, "class suppress(")),
        f"{GH}/asyncio/taskgroups.py": github_source_page("asyncio/taskgroups.py", f"{GH}/asyncio/taskgroups.py"),
        f"{GH}/traceback.py#L674": github_source_page(
            "traceback.py", f"{GH}/traceback.py#L674", line_of(tb, "class TracebackException:")
        ),
        f"{GH}/test/test_raise.py#L151": github_source_page(
            "test/test_raise.py", f"{GH}/test/test_raise.py#L151", line_of(raise_tests, "class TestCause(")
        ),
        f"{GH}/test/test_raise.py#L297": github_source_page(
            "test/test_raise.py", f"{GH}/test/test_raise.py#L297", line_of(raise_tests, "class TestContext(")
        ),
        f"{GH}/test/test_exception_group.py#L551": github_source_page(
            "test/test_exception_group.py", f"{GH}/test/test_exception_group.py#L551",
            line_of(stdlib_source("test/test_exception_group.py"), "class ExceptionGroupSplitTestBase("),
        ),
        f"{GH}/test/test_contextlib.py#L59": github_source_page(
            "test/test_contextlib.py", f"{GH}/test/test_contextlib.py#L59",
            line_of(ctx_tests, "class ContextManagerTestCase("),
        ),
        f"{GH}/test/test_except_star.py#L587": github_source_page(
            "test/test_except_star.py", f"{GH}/test/test_except_star.py#L587",
            line_of(stdlib_source("test/test_except_star.py"), "class TestExceptStarRaise("),
        ),
        f"{GH}/tempfile.py#L840": github_source_page(
            "tempfile.py", f"{GH}/tempfile.py#L840", line_of(stdlib_source("tempfile.py"), "class TemporaryDirectory")
        ),
        f"{GH}/test/test_exception_group.py": github_source_page(
            "test/test_exception_group.py", f"{GH}/test/test_exception_group.py"
        ),
    }
    return pages


RESEARCH_SYSTEM = para(
    """
    You are a research assistant for a software engineering team. You answer technical questions by
    searching the web, reading primary sources and writing a concise, well-sourced answer. Your readers
    are experienced engineers: be precise, skip generalities, and show small code examples where they
    make a point clearer than prose.

    How to work:
    - Start with web_search to find candidate sources, then read them with fetch_page. Search results
      only show snippets; never cite a page you have not fetched.
    - Prefer primary sources: official documentation, PEPs/RFCs/specifications and the source code of
      the reference implementation. Use blog posts and Q&A sites to find leads and examples, and verify
      their claims against a primary source before relying on them.
    - When sources disagree or a behaviour changed between versions, say so explicitly and give the
      version in which it changed.
    - Use save_note to record findings as you go (fact, version, URL). Notes survive if the conversation
      gets long; re-read them before writing the final answer.

    Tools:
    - web_search(query): returns JSON with up to 8 results (title, url, snippet).
    - fetch_page(url): returns the readable text of a page, at most 20,000 characters. If the URL has a
      #fragment, the text starts at that section (on GitHub, at that line).
    - save_note(text): stores a note; returns its number.

    Final answer format: a short summary first (3-5 sentences), then sections with headings, then a
    "Sources" list with the URLs you actually used. Cite sources inline as [n]. Keep it under 900 words
    unless asked for more.
    """
)

RESEARCH_TOOLS = [
    tool_schema(
        "web_search",
        "Search the web. Returns JSON: {query, results: [{rank, title, url, snippet}]}.",
        {"query": prop("string", "Search query.")},
        ["query"],
    ),
    tool_schema(
        "fetch_page",
        "Fetch a web page and return its readable text (max 20,000 characters). A #fragment starts the "
        "text at that section or, on GitHub, at that line.",
        {"url": prop("string", "Absolute http(s) URL.")},
        ["url"],
    ),
    tool_schema(
        "save_note",
        "Save a research note for later. Returns the note number.",
        {"text": prop("string", "The note: a finding, with version and source URL.")},
        ["text"],
    ),
]


def research_agent() -> dict[str, Any]:
    """A research agent writes a sourced explainer on with, chaining and exception groups."""
    pages = research_pages()
    notes: list[str] = []

    def web(query: str) -> Call:
        return Call("web_search", {"query": query}, search(query))

    def fetch(url: str) -> Call:
        return Call("fetch_page", {"url": url}, pages[url])

    def note(text: str) -> Call:
        notes.append(text)
        return Call("save_note", {"text": text}, f"Saved note #{len(notes)} ({len(text)} characters).")

    queries = list(SEARCH_RESULTS)
    chat = Chat("research", RESEARCH_TOOLS)
    chat.system(RESEARCH_SYSTEM)
    chat.user(
        dedent(
            """
            I'm writing an internal explainer for our backend team about error handling in cleanup code,
            because we keep losing the "real" error in our logs. Can you research:

            1. When an exception is raised inside a `with` block and `__exit__` raises too, which one
               propagates, and what happens to the original?
            2. How does that work with contextlib.ExitStack when several callbacks fail?
            3. What did ExceptionGroup / except* in 3.11 change here? Does contextlib.suppress work with
               exception groups?

            I'd like the relevant history too (which PEPs, which Python versions), and links I can put in
            the doc. We're on 3.11 in production, moving to 3.12 later this year.
            """
        )
    )
    chat.step(web(queries[0]), say="Starting with the core behaviour of `with` when `__exit__` raises.")
    chat.step(fetch(SO_URL), fetch(f"{DOCS}/reference/compound_stmts.html#the-with-statement"))
    chat.step(fetch(f"{DOCS}/reference/datamodel.html#context-managers"))
    chat.step(
        note(
            "with + failing __exit__: the exception raised in __exit__ propagates; the body's exception is "
            "attached as __context__ (implicit chaining), traceback shows 'During handling of the above "
            "exception...'. __exit__ returning true suppresses; docs say __exit__ should not re-raise the "
            f"passed-in exception. Sources: {DOCS}/reference/compound_stmts.html#the-with-statement, "
            f"{DOCS}/reference/datamodel.html#context-managers, demo in {SO_URL}"
        )
    )
    chat.step(web(queries[1]))
    chat.step(fetch("https://peps.python.org/pep-0343/"), fetch(BLOG_URL))
    chat.step(
        note(
            "History: PEP 343 (Guido van Rossum, Nick/Alyssa Coghlan), created 2005, Python 2.5 (needed "
            "'from __future__ import with_statement' in 2.5). Replaced PEP 340 (anonymous blocks) and PEP "
            "310. Spec = try/except/finally translation; exit(mgr, *sys.exc_info()) is called inside the "
            "except clause, so a failing __exit__ raises *while handling* the body exception. PEP: "
            "'Raising a different exception from within __exit__() replaces the original exception and is "
            "reserved for cases where __exit__() itself failed.' Since 3.11 the bytecode uses BEFORE_WITH "
            f"+ exception table (zero-cost exceptions). https://peps.python.org/pep-0343/ ; {BLOG_URL}"
        )
    )
    chat.step(web(queries[2]))
    chat.step(fetch("https://peps.python.org/pep-3134/"), fetch(f"{DOCS}/reference/simple_stmts.html#the-raise-statement"))
    chat.step(fetch(f"{DOCS}/reference/executionmodel.html#exceptions"))
    chat.step(
        fetch(f"{GH}/test/test_raise.py#L151"),
        fetch(f"{GH}/test/test_raise.py#L297"),
        say="The docs are clear; CPython's own tests for raise/from/context make good concrete examples.",
    )
    chat.step(
        note(
            "Chaining: PEP 3134 (Ka-Ping Yee), Python 3.0: __context__ (implicit, set automatically when "
            "raising during handling), __cause__ (explicit, raise X from Y), __traceback__. Display: 'The "
            "above exception was the direct cause...' vs 'During handling of the above exception...'. "
            "raise X from None sets __suppress_context__ (PEP 415, 3.3); __context__ still kept. In 2.x the "
            "first exception was simply lost. https://peps.python.org/pep-3134/ ; "
            f"{DOCS}/reference/simple_stmts.html#the-raise-statement"
        )
    )
    chat.step(web(queries[3]), say="Now ExitStack: how it orders callbacks and chains exceptions.")
    chat.step(fetch(f"{DOCS}/library/contextlib.html"))
    chat.step(fetch(f"{GH}/contextlib.py#L459"))
    chat.step(
        fetch(f"{GH}/test/test_contextlib.py#L674"),
        say=(
            "ExitStack.__exit__ catches each callback's exception, keeps going, and uses "
            "_fix_exception_context() to rewrite __context__. Checking the tests to confirm the intended "
            "chain order."
        ),
    )
    chat.step(fetch(f"{GH}/contextlib.py#L125"), fetch(f"{GH}/test/test_contextlib.py#L59"))
    chat.step(
        note(
            "ExitStack (3.3; AsyncExitStack 3.7): callbacks run LIFO; all callbacks run even if one "
            "raises; a raising callback replaces the pending exception and _fix_exception_context() "
            "rewrites __context__ so the chain looks exactly like nested with statements "
            "(test_exit_exception_chaining_reference); a callback returning true suppresses the pending "
            "exception. Only ONE exception propagates - the last one raised - earlier ones are in the "
            f"__context__ chain. @contextmanager: exception is thrown into the generator at yield. "
            f"{GH}/contextlib.py#L459 ; {GH}/test/test_contextlib.py#L674"
        )
    )
    chat.step(fetch(f"{GH}/test/test_with.py#L355"))
    chat.step(web(queries[4]), say="On to exception groups and except* (3.11).")
    chat.step(fetch("https://peps.python.org/pep-0654/"))
    chat.step(fetch(f"{DOCS}/reference/compound_stmts.html#the-try-statement"), fetch(f"{DOCS}/whatsnew/3.11.html"))
    chat.step(fetch(f"{GH}/test/test_exception_group.py"))
    chat.step(
        fetch(f"{GH}/test/test_exception_group.py#L551"),
        say="split() and derive() are what suppress() relies on in 3.12; checking how nested groups are split.",
    )
    chat.step(
        fetch(f"{GH}/test/test_except_star.py#L587"),
        fetch(f"{GH}/tempfile.py#L840"),
        say=(
            "Two checks: how exceptions raised inside except* clauses are chained, and the "
            "TemporaryDirectory cleanup case the PEP cites as motivation."
        ),
    )
    chat.step(
        note(
            "PEP 654 (Katriel, Selivanov, van Rossum), Python 3.11: ExceptionGroup/BaseExceptionGroup "
            "(.message, .exceptions, subgroup(), split(), derive()), except* matches subgroups, each clause "
            "runs at most once, unmatched exceptions re-raised; can't mix except and except* in one try; "
            "break/continue/return not allowed in except*. Motivation explicitly lists 'errors in wrapper "
            "code' (TemporaryDirectory cleanup error masking the user's error). PEP 678 add_note() also 3.11. "
            "Note: `with` and ExitStack did NOT change - they still propagate one exception with "
            "__context__ chaining. https://peps.python.org/pep-0654/ ; "
            f"{DOCS}/reference/compound_stmts.html#the-try-statement"
        )
    )
    chat.step(web(queries[5]))
    chat.step(fetch(f"{DOCS}/library/contextlib.html#contextlib.suppress"), fetch(f"{GH}/contextlib.py#L429"))
    chat.step(
        note(
            "contextlib.suppress + groups: 3.11 source (suppress.__exit__) only does issubclass(exctype, "
            "self._exceptions) -> a group containing only ValueError is NOT suppressed by "
            "suppress(ValueError) on 3.11. 3.12 docs: 'suppress now supports suppressing exceptions raised "
            "as part of a BaseExceptionGroup' - matching exceptions removed, rest re-raised via derive(). "
            f"{DOCS}/library/contextlib.html#contextlib.suppress ; {GH}/contextlib.py#L429"
        )
    )
    chat.step(web(queries[6]))
    chat.step(fetch(f"{GH}/asyncio/taskgroups.py"))
    chat.step(web(queries[7]))
    chat.step(fetch(f"{GH}/traceback.py#L674"))
    chat.step(
        note(
            "asyncio.TaskGroup (3.11) __aexit__ collects child errors and raises BaseExceptionGroup('unhandled "
            "errors in a TaskGroup', errors) - so on 3.11 cleanup inside TaskGroup code needs except*. "
            "traceback.TracebackException walks __cause__ / __context__ (unless __suppress_context__) and "
            "renders groups as a tree; this is what logging.exception uses. "
            f"{GH}/asyncio/taskgroups.py ; {GH}/traceback.py#L674"
        )
    )
    chat.reply(_research_answer())
    return chat.to_dict()


def _research_answer() -> str:
    return dedent(
        f"""
        **Summary.** In a `with` block only one exception ever propagates: if `__exit__` raises, *its*
        exception wins and the body's exception is not lost but attached as `__context__` [1][2][4]. That is
        why the traceback shows "During handling of the above exception, another exception occurred", and
        why logging code that prints only `str(exc)` appears to "lose" the real error. `ExitStack` follows
        the same rule for any number of callbacks and rewrites `__context__` so the chain looks like nested
        `with` statements [6][7]. Exception groups (3.11) did not change `with` or `ExitStack`; they add a
        way to raise *several* exceptions on purpose, and `contextlib.suppress` only understands groups from
        3.12 on [8][10].

        ## 1. `with` when `__exit__` raises

        - Body raises → `__exit__(type, value, tb)` is called. Returns true → exception suppressed. Returns
          false/`None` → original re-raised [1][3].
        - `__exit__` raises → the new exception propagates. Since `__exit__` runs while the body's
          exception is being handled, the new exception gets `__context__ = <body exception>` automatically
          (implicit chaining) [2][4].
        - `__exit__` should not re-raise the passed-in exception; return a false value instead [3]. PEP 343
          reserves raising in `__exit__` for "cases where `__exit__()` itself failed" [2].

        ```python
        def __exit__(self, exc_type, exc, tb):
            try:
                self.rollback()
            except Exception:
                if exc is None:
                    raise                      # cleanup error is the only error
                log.warning("rollback failed", exc_info=True)
            return False                       # let the body's exception propagate
        ```

        **History.** `with` arrived with PEP 343 in Python 2.5 (behind `from __future__ import
        with_statement`; default in 2.6), after PEP 340 and PEP 310 were dropped [2]. Chaining came later:
        PEP 3134 added `__context__`, `__cause__` and `__traceback__` in Python 3.0 [4] - in Python 2 the
        first exception was simply gone. `raise ... from None` (hide the context in tracebacks, attribute
        still set) is PEP 415, Python 3.3 [5]. Since 3.11 the statement compiles to `BEFORE_WITH` plus an
        exception table, with identical semantics [11].

        **Practical consequence:** log with `logger.exception(...)` / `traceback.format_exception(exc)`,
        which walk `__cause__`/`__context__` [12]; never just `str(exc)`.

        ## 2. `ExitStack` with several failing callbacks

        - Callbacks run in LIFO order, and *all* of them run even if one raises [6][7].
        - Each new exception replaces the pending one; `_fix_exception_context()` patches `__context__` so
          the final exception's chain contains the earlier ones in the same order nested `with` statements
          would produce - the test suite checks exactly this against real nested `with`s [7][13].
        - A callback returning true suppresses the exception pending at that point.
        - Result: still one exception, the last one raised, with the others reachable via `__context__`.

        ## 3. What 3.11 changed: `ExceptionGroup` and `except*`

        - PEP 654 (3.11) adds `ExceptionGroup`/`BaseExceptionGroup` and `except*` [8][9]. Each `except*`
          clause handles the matching part of a group; unmatched exceptions are re-raised; `except` and
          `except*` can't be mixed in one `try`.
        - The PEP names our problem explicitly as a motivation ("errors in wrapper code": a cleanup error in
          `__exit__` masking the user's error) [8] - but the fix is opt-in: `with`, `@contextmanager` and
          `ExitStack` still raise a single exception. If you want both errors as peers, raise
          `ExceptionGroup("...", [body_exc, cleanup_exc])` yourself; every caller then needs `except*`.
        - You meet groups anyway in `asyncio.TaskGroup` (3.11), whose `__aexit__` raises
          `BaseExceptionGroup("unhandled errors in a TaskGroup", ...)` [14].
        - **`contextlib.suppress`:** on **3.11** it only checks `issubclass(exc_type, ...)`, so
          `suppress(ValueError)` does *not* suppress `ExceptionGroup("x", [ValueError()])` [15]. From
          **3.12** it splits groups: matching exceptions are removed and the rest re-raised via `derive()`
          [10]. Until we are on 3.12, use `except*` where groups can occur.
        - Related 3.11 addition: `BaseException.add_note()` (PEP 678) to attach context without wrapping [11].

        ## Recommendations for our code

        1. Cleanup code catches and logs its own failures when another exception is already in flight
           (pattern above); it raises only when it is the sole failure.
        2. Always log full tracebacks; grep for `str(e)` in `except` blocks.
        3. Use `raise NewError(...) from err` when translating errors, never `from None` in library code.
        4. In `TaskGroup` code on 3.11, handle errors with `except*`, and don't rely on `suppress()` for
           groups before 3.12.

        ## Sources

        1. {DOCS}/reference/compound_stmts.html#the-with-statement
        2. https://peps.python.org/pep-0343/
        3. {DOCS}/reference/datamodel.html#context-managers
        4. https://peps.python.org/pep-3134/
        5. {DOCS}/reference/simple_stmts.html#the-raise-statement (the `from None` / `__suppress_context__` rules)
        6. {DOCS}/library/contextlib.html
        7. {GH}/contextlib.py#L459
        8. https://peps.python.org/pep-0654/
        9. {DOCS}/reference/compound_stmts.html#the-try-statement
        10. {DOCS}/library/contextlib.html#contextlib.suppress
        11. {DOCS}/whatsnew/3.11.html and {BLOG_URL}
        12. {GH}/traceback.py#L674
        13. {GH}/test/test_contextlib.py#L674
        14. {GH}/asyncio/taskgroups.py
        15. {GH}/contextlib.py#L429
        """
    )


# ---------------------------------------------------------------------------
# Sample 3: the customer-support agent -- store data
# ---------------------------------------------------------------------------

STORE_TODAY = dt.datetime(2024, 6, 10, 16, 5)


def _ts(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S-07:00")


def _money(value: float) -> str:
    return f"{value:.2f}"


def _product(sku: str, name: str, variant: str, price: float, qty: int, weight: float, specs: dict[str, str],
             description: str, warehouse: str, shipment: str, status: str) -> dict[str, Any]:
    """One order line with the catalogue details the order API embeds."""
    return {
        "line_id": f"LI-{hashlib.sha256(sku.encode()).hexdigest()[:8].upper()}",
        "sku": sku,
        "name": name,
        "variant": variant,
        "quantity": qty,
        "unit_price": _money(price),
        "line_total": _money(price * qty),
        "discount": "0.00",
        "tax": "0.00",
        "fulfillment": {"warehouse": warehouse, "shipment_id": shipment, "status": status},
        "return_policy": {"returnable": True, "window_days": 60, "final_sale": False},
        "refunded_amount": "0.00",
        "product": {
            "url": f"https://www.fernhill-outdoor.com/p/{sku.lower()}",
            "category": specs.pop("category"),
            "brand": "Fernhill",
            "description": description,
            "weight_kg": weight,
            "specs": specs,
            "images": [
                f"https://cdn.fernhill-outdoor.com/img/{sku.lower()}/{view}.jpg" for view in ("main", "side", "detail")
            ],
        },
    }


def _tracking(rng: random.Random, carrier: str, start: dt.datetime, stops: list[tuple[str, str, str]]) -> list[dict]:
    """Carrier scan events: (status code, description, location) with plausible gaps."""
    events, moment = [], start
    for code, text, location in stops:
        moment += dt.timedelta(hours=rng.randint(3, 14), minutes=rng.randint(0, 59))
        events.append({"timestamp": _ts(moment), "carrier": carrier, "status": code, "description": text,
                       "location": location})
    return events


def _warehouse_log(rng: random.Random, items: list[dict], start: dt.datetime, warehouse: str) -> list[dict]:
    """Pick/pack/label events as the warehouse system records them."""
    log, moment = [], start
    for step, actor in (("released", "oms"), ("wave_assigned", "wms"), ("picked", "picker"), ("packed", "packer"),
                        ("label_printed", "packer"), ("manifested", "wms"), ("loaded", "dock")):
        for item in items if step in ("picked", "packed") else items[:1]:
            moment += dt.timedelta(minutes=rng.randint(4, 55))
            entry = {"at": _ts(moment), "warehouse": warehouse, "step": step, "actor": f"{actor}-{rng.randint(10, 99)}"}
            if step == "picked":
                entry.update(sku=item["sku"], bin=f"{rng.choice('ABCDEFG')}{rng.randint(1, 40):02d}-{rng.randint(1, 6)}",
                             quantity=item["quantity"], scan="ok")
            if step == "packed":
                entry.update(sku=item["sku"], carton=rng.choice(["C12", "C18", "C24", "POLY-M"]), weight_check="pass")
            log.append(entry)
    return log


def _emails(order_id: str, name: str, items: list[dict], events: list[tuple[str, str, str]]) -> list[dict]:
    """Customer emails the order system sent: (timestamp, template, extra sentence)."""
    lines = "\n".join(f"  {i['quantity']} x {i['name']} ({i['variant']})  ${i['line_total']}" for i in items)
    subjects = {
        "order_confirmation": f"Your Fernhill order {order_id} is confirmed",
        "shipment_confirmation": f"Part of your order {order_id} is on its way",
        "delivery_confirmation": f"Delivered: part of your order {order_id}",
        "delay_notice": f"An update about your order {order_id}",
    }
    return [
        {
            "sent_at": at,
            "template": template,
            "to": "maya.lindqvist@example.net",
            "subject": subjects[template],
            "status": "delivered",
            "opened": template != "delay_notice",
            "body_text": (
                f"Hi {name.split()[0]},\n\n{extra}\n\nOrder {order_id}\n{lines}\n\n"
                "Questions? Reply to this email or chat with us at fernhill-outdoor.com/help.\n"
                "Fernhill Outdoor Co. · 1120 SE Stark St · Portland, OR 97214"
            ),
        }
        for at, template, extra in events
    ]


def store_orders() -> dict[str, dict[str, Any]]:
    """The two orders of the customer, as returned by the order API."""
    rng = random.Random(1184203)
    placed = dt.datetime(2024, 5, 28, 20, 41)
    old_address = {"name": "Maya Lindqvist", "line1": "2231 SE Division St", "line2": "Apt 4", "city": "Portland",
                   "state": "OR", "postal_code": "97202", "country": "US", "phone": "+1 503-555-0148"}
    ups = _tracking(rng, "UPS", placed + dt.timedelta(hours=14), [
        ("LABEL_CREATED", "Shipper created a label, UPS has not received the package yet.", "Reno, NV, US"),
        ("PICKED_UP", "Picked up by UPS", "Reno, NV, US"),
        ("IN_TRANSIT", "Departed from facility", "Sparks, NV, US"),
        ("IN_TRANSIT", "Arrived at facility", "Sacramento, CA, US"),
        ("IN_TRANSIT", "Departed from facility", "Sacramento, CA, US"),
        ("IN_TRANSIT", "Arrived at facility", "Medford, OR, US"),
        ("IN_TRANSIT", "Departed from facility", "Medford, OR, US"),
        ("IN_TRANSIT", "Arrived at facility", "Portland, OR, US"),
        ("OUT_FOR_DELIVERY", "Out for delivery today", "Portland, OR, US"),
        ("DELIVERED", "Delivered - left at front door", "Portland, OR, US"),
    ])
    fedex = _tracking(rng, "FedEx", placed + dt.timedelta(hours=20), [
        ("LABEL_CREATED", "Shipment information sent to FedEx", "Columbus, OH, US"),
        ("PICKED_UP", "Picked up", "Columbus, OH, US"),
        ("IN_TRANSIT", "Arrived at FedEx hub", "Indianapolis, IN, US"),
        ("IN_TRANSIT", "Departed FedEx hub", "Indianapolis, IN, US"),
        ("IN_TRANSIT", "Arrived at FedEx location", "Salt Lake City, UT, US"),
        ("EXCEPTION", "Package damaged during transit - shipper contacted", "Salt Lake City, UT, US"),
        ("EXCEPTION", "Damaged, handling per shipper instructions", "Salt Lake City, UT, US"),
        ("RETURN_TO_SENDER", "Returning package to shipper", "Salt Lake City, UT, US"),
        ("IN_TRANSIT", "Departed FedEx location", "Salt Lake City, UT, US"),
    ])
    tent = _product(
        "FH-TNT-RL2-OLV", "Ridgeline 2P Backpacking Tent", "Olive / 2-person", 349.00, 1, 1.62,
        {"category": "Tents", "capacity": "2 people", "packed_size": "46 x 16 cm", "floor_area": "2.7 m²",
         "peak_height": "102 cm", "poles": "DAC NSL aluminium", "fly": "20D ripstop nylon, silicone/PU",
         "hydrostatic_head_fly": "1500 mm", "hydrostatic_head_floor": "3000 mm", "doors": "2", "vestibules": "2"},
        "Freestanding double-wall tent with two doors and two vestibules. Colour-coded clips, pre-bent "
        "poles and a full-coverage fly make it quick to pitch in wind and rain.", "COL-1 Columbus, OH",
        "SHP-1184203-2", "exception")
    pad = _product(
        "FH-PAD-AA-R", "Alpine Air Sleeping Pad", "Regular (183 x 51 cm)", 129.95, 1, 0.48,
        {"category": "Sleeping pads", "r_value": "4.2 (ASTM F3340)", "thickness": "7.6 cm",
         "valve": "two-way flat valve with dump port", "packed_size": "23 x 10 cm", "shape": "mummy"},
        "Insulated three-season air pad with a reflective film layer and a fast flat valve. Includes pump "
        "sack, stuff sack and field repair kit.", "RNO-2 Reno, NV", "SHP-1184203-1", "delivered")
    mug = _product(
        "FH-MUG-350-TI", "Trail Mug 350 ml", "Titanium", 14.50, 2, 0.07,
        {"category": "Cookware", "capacity": "350 ml", "material": "grade 1 titanium", "handles": "folding"},
        "Single-wall titanium mug with folding handles and volume markings. Nests over a 100 g gas canister.",
        "RNO-2 Reno, NV", "SHP-1184203-1", "delivered")
    first = {
        "order_id": "FH-1184203",
        "status": "partially_fulfilled",
        "placed_at": _ts(placed),
        "channel": "web",
        "customer": {"customer_id": "CUS-0048817", "email": "maya.lindqvist@example.net", "name": "Maya Lindqvist"},
        "currency": "USD",
        "items": [tent, pad, mug],
        "totals": {"items": "507.95", "discounts": "0.00", "shipping": "12.95", "tax": "0.00", "total": "520.90",
                   "refunded": "0.00", "net": "520.90"},
        "shipping_address": old_address,
        "billing_address": dict(old_address, line2="Apt 4", phone=None),
        "shipping_method": {"code": "STANDARD", "name": "Standard (3-6 business days)", "price": "12.95"},
        "shipments": [
            {"shipment_id": "SHP-1184203-1", "carrier": "UPS", "service": "UPS Ground",
             "tracking_number": "1Z8A41W30397215530", "warehouse": "RNO-2 Reno, NV", "status": "delivered",
             "line_ids": [pad["line_id"], mug["line_id"]], "shipped_at": ups[1]["timestamp"],
             "delivered_at": ups[-1]["timestamp"], "weight_kg": 0.65, "events": ups},
            {"shipment_id": "SHP-1184203-2", "carrier": "FedEx", "service": "FedEx Ground",
             "tracking_number": "784419620358", "warehouse": "COL-1 Columbus, OH", "status": "exception",
             "exception": {"code": "DAMAGED_IN_TRANSIT", "carrier_claim": "FDX-CLM-55120874",
                           "disposition": "return_to_sender", "reported_at": fedex[5]["timestamp"]},
             "line_ids": [tent["line_id"]], "shipped_at": fedex[1]["timestamp"], "delivered_at": None,
             "weight_kg": 1.9, "events": fedex},
        ],
        "payments": [
            {"payment_id": "PAY-77120-GC", "method": "gift_card", "gift_card_last4": "8841", "amount": "75.00",
             "captured": "75.00", "refunded": "0.00", "status": "captured", "captured_at": _ts(placed)},
            {"payment_id": "PAY-77120-CC", "method": "card", "brand": "visa", "last4": "4417", "amount": "445.90",
             "captured": "445.90", "refunded": "0.00", "status": "captured", "captured_at": _ts(placed),
             "authorization_code": "A71C2Q", "avs_result": "Y", "cvv_result": "M"},
        ],
        "refunds": [],
        "warehouse_log": _warehouse_log(rng, [pad, mug], placed + dt.timedelta(hours=2), "RNO-2")
        + _warehouse_log(rng, [tent], placed + dt.timedelta(hours=9), "COL-1"),
        "communications": _emails("FH-1184203", "Maya Lindqvist", [tent, pad, mug], [
            (_ts(placed + dt.timedelta(minutes=1)), "order_confirmation",
             "Thanks for your order! We'll email you again when it ships. Items from different warehouses may "
             "arrive in separate packages."),
            (ups[1]["timestamp"], "shipment_confirmation",
             "Good news: a package with part of your order has left our Reno warehouse with UPS (tracking "
             "1Z8A41W30397215530)."),
            (fedex[1]["timestamp"], "shipment_confirmation",
             "Good news: a package with part of your order has left our Columbus warehouse with FedEx "
             "(tracking 784419620358)."),
            (ups[-1]["timestamp"], "delivery_confirmation",
             "UPS reports that a package from your order was delivered. We hope you enjoy your new gear!"),
            (fedex[6]["timestamp"], "delay_notice",
             "The carrier reported a problem with one of your packages. We're looking into it and will be in "
             "touch with next steps."),
        ]),
        "risk": {"score": 12, "decision": "approve", "signals": ["returning_customer", "avs_match"]},
        "notes": [
            {"author": "system", "created_at": fedex[5]["timestamp"],
             "text": "Carrier reported shipment SHP-1184203-2 damaged in transit; claim FDX-CLM-55120874 opened "
                     "automatically. Customer not yet contacted."},
        ],
        "timeline": [
            {"at": _ts(placed), "event": "order_placed"},
            {"at": _ts(placed + dt.timedelta(minutes=1)), "event": "payment_captured", "detail": "gift card 75.00"},
            {"at": _ts(placed + dt.timedelta(minutes=1)), "event": "payment_captured", "detail": "visa 445.90"},
            {"at": _ts(placed + dt.timedelta(minutes=2)), "event": "risk_check_passed"},
            {"at": ups[0]["timestamp"], "event": "shipment_label_created", "detail": "SHP-1184203-1"},
            {"at": fedex[0]["timestamp"], "event": "shipment_label_created", "detail": "SHP-1184203-2"},
            {"at": ups[-1]["timestamp"], "event": "shipment_delivered", "detail": "SHP-1184203-1"},
            {"at": fedex[5]["timestamp"], "event": "shipment_exception", "detail": "SHP-1184203-2 damaged in transit"},
            {"at": fedex[7]["timestamp"], "event": "shipment_return_started", "detail": "SHP-1184203-2"},
        ],
    }
    placed2 = dt.datetime(2024, 6, 8, 9, 12)
    lamp = _product(
        "FH-LMP-400", "Lumen 400 Headlamp", "Graphite", 44.95, 1, 0.09,
        {"category": "Lighting", "max_output": "400 lm", "battery": "3x AAA or USB-C rechargeable core",
         "waterproof": "IPX4", "modes": "spot, flood, red, lock"},
        "Lightweight headlamp with a 400 lumen spot/flood beam, red night-vision mode and lock-out.",
        "RNO-2 Reno, NV", "SHP-1186677-1", "awaiting_pick")
    batteries = _product(
        "FH-BAT-AAA8", "AAA Lithium Batteries (8-pack)", "8-pack", 16.99, 1, 0.1,
        {"category": "Accessories", "chemistry": "lithium iron disulfide", "shelf_life": "20 years"},
        "Cold-resistant lithium AAA cells for headlamps and GPS units.", "RNO-2 Reno, NV", "SHP-1186677-1",
        "awaiting_pick")
    second = {
        "order_id": "FH-1186677",
        "status": "processing",
        "placed_at": _ts(placed2),
        "channel": "app",
        "customer": first["customer"],
        "currency": "USD",
        "items": [lamp, batteries],
        "totals": {"items": "61.94", "discounts": "0.00", "shipping": "0.00", "tax": "0.00", "total": "61.94",
                   "refunded": "0.00", "net": "61.94"},
        "shipping_address": old_address,
        "billing_address": dict(old_address, phone=None),
        "shipping_method": {"code": "STANDARD", "name": "Standard (3-6 business days)", "price": "0.00",
                            "note": "free shipping over $50"},
        "shipments": [
            {"shipment_id": "SHP-1186677-1", "carrier": None, "service": None, "tracking_number": None,
             "warehouse": "RNO-2 Reno, NV", "status": "awaiting_pick", "line_ids": [lamp["line_id"],
             batteries["line_id"]], "label_created": False, "estimated_ship_date": "2024-06-11", "events": []},
        ],
        "payments": [
            {"payment_id": "PAY-77903-CC", "method": "card", "brand": "visa", "last4": "4417", "amount": "61.94",
             "captured": "0.00", "refunded": "0.00", "status": "authorized", "authorized_at": _ts(placed2),
             "authorization_code": "B20K7M"},
        ],
        "refunds": [],
        "warehouse_log": _warehouse_log(rng, [lamp, batteries], placed2 + dt.timedelta(hours=20), "RNO-2")[:2],
        "communications": _emails("FH-1186677", "Maya Lindqvist", [lamp, batteries], [
            (_ts(placed2 + dt.timedelta(minutes=1)), "order_confirmation",
             "Thanks for your order! We'll email you again when it ships."),
        ]),
        "risk": {"score": 8, "decision": "approve", "signals": ["returning_customer"]},
        "notes": [],
        "timeline": [
            {"at": _ts(placed2), "event": "order_placed"},
            {"at": _ts(placed2 + dt.timedelta(minutes=1)), "event": "payment_authorized", "detail": "visa 61.94"},
            {"at": _ts(placed2 + dt.timedelta(minutes=2)), "event": "risk_check_passed"},
            {"at": _ts(placed2 + dt.timedelta(hours=20)), "event": "released_to_warehouse", "detail": "RNO-2"},
        ],
    }
    return {first["order_id"]: first, second["order_id"]: second}


def store_customer() -> dict[str, Any]:
    """The customer record returned by lookup_customer."""
    rng = random.Random(48817)
    history = []
    for number, (date, total, status) in enumerate(
        [("2021-04-17", 212.40, "delivered"), ("2021-09-02", 64.85, "delivered"), ("2022-03-21", 389.00, "returned"),
         ("2022-06-30", 129.90, "delivered"), ("2022-11-25", 58.00, "delivered"), ("2023-05-14", 274.35, "delivered"),
         ("2023-08-03", 31.90, "delivered"), ("2024-02-09", 96.45, "delivered"), ("2024-05-28", 520.90,
         "partially_fulfilled"), ("2024-06-08", 61.94, "processing")]
    ):
        order_id = "FH-1186677" if status == "processing" else (
            "FH-1184203" if status == "partially_fulfilled" else f"FH-{1020000 + number * 17311 + rng.randint(0, 999)}")
        history.append({"order_id": order_id, "placed_at": date, "total": _money(total), "status": status})
    return {
        "customer_id": "CUS-0048817",
        "name": "Maya Lindqvist",
        "email": "maya.lindqvist@example.net",
        "phone": "+1 503-555-0148",
        "created_at": "2021-04-17T18:22:09-07:00",
        "loyalty": {"tier": "Summit", "points": 2840, "member_since": "2021-04-17",
                    "benefits": ["free standard shipping over $50", "extended 90-day returns"]},
        "addresses": [
            {"address_id": "ADR-1", "default": True, "name": "Maya Lindqvist", "line1": "2231 SE Division St",
             "line2": "Apt 4", "city": "Portland", "state": "OR", "postal_code": "97202", "country": "US"},
        ],
        "payment_methods": [{"type": "card", "brand": "visa", "last4": "4417", "expires": "09/27"},
                            {"type": "gift_card", "last4": "8841", "balance": "0.00"}],
        "marketing_opt_in": False,
        "support_history": [
            {"ticket": "T-88213", "opened": "2022-03-22", "topic": "Return: Cascade 65L pack (too small)",
             "resolution": "Refunded 389.00 to visa"},
            {"ticket": "T-90544", "opened": "2023-05-20", "topic": "Question about stove fuel compatibility",
             "resolution": "Answered"},
        ],
        "orders": history,
        "flags": [],
    }


KB_ARTICLES: dict[str, dict[str, str]] = {
    "KB-1042": {
        "title": "Shipment exceptions: damaged, delayed or returned packages",
        "updated_at": "2024-04-02",
        "body": """
            # Shipment exceptions: damaged, delayed or returned packages

            A carrier marks a package with an *exception* when something interrupts normal delivery. The
            order page and the order API show the carrier's last scan and, for damage, an `exception` block
            with a code and a claim number.

            ## Common exception codes

            | Code | What it means | What happens next |
            |------|---------------|-------------------|
            | WEATHER_DELAY | Regional weather or carrier network delay | Package continues automatically, usually 1-3 days late |
            | ADDRESS_ISSUE | Carrier could not match the address | Carrier holds the package 5 days; contact the customer to confirm the address |
            | DAMAGED_IN_TRANSIT | Package or contents damaged in the carrier network | Carrier either delivers (if contents look intact) or returns the package to us |
            | DELIVERY_ATTEMPTED | Nobody available, signature required | Up to 3 attempts, then held at a pickup location |
            | RETURN_TO_SENDER | Package is on its way back to our warehouse | Do not wait for delivery; offer a replacement or a refund |

            ## Damaged in transit

            When the carrier reports DAMAGED_IN_TRANSIT with disposition `return_to_sender`, the package will
            **not** be delivered. The carrier opens a claim automatically; the claim is between us and the
            carrier and the customer never needs to contact the carrier.

            Agents should offer the customer the choice of:

            1. **Replacement** — a new unit ships from the nearest warehouse with stock, at no cost. Use the
               fastest service that the original shipping method allows; Summit members get an upgrade to
               Express on replacements.
            2. **Refund** — refund the affected items in full. Do not wait for the returned package to arrive
               at the warehouse; the carrier claim covers our loss.

            If the customer needs the item by a specific date, check the delivery estimate for a replacement
            before offering it, and say clearly if it cannot arrive in time.

            ## Delayed packages

            Packages without a scan for 5 business days are considered *stalled*. Open a carrier trace from
            the shipment page. If there is still no scan after 8 business days, treat the package as lost
            (see KB-1187 "Lost packages").

            ## Talking to the customer

            - Tell the customer what happened in plain words ("the carrier damaged the package and is sending
              it back to us"), not the raw status code.
            - Apologise once; don't blame the carrier.
            - Give a concrete next step and a timeframe.
            - Never promise a delivery date for a replacement that the delivery estimate does not support.
            """,
    },
    "KB-1120": {
        "title": "Refund policy and how to issue refunds",
        "updated_at": "2024-05-15",
        "body": """
            # Refund policy and how to issue refunds

            ## Policy summary

            - Unused items can be returned within 60 days (90 days for Summit loyalty members) for a full
              refund of the item price.
            - Items damaged in transit or defective on arrival are refunded in full, including any shipping
              charged for them (see KB-1206 for the shipping part).
            - Refunds are issued to the original payment methods only. We do not refund to a different card,
              to store credit (unless the customer asks for it), or in cash.

            ## Issuing a refund with the `issue_refund` tool

            - Refund per order, with the amount in USD and a reason the finance team can understand.
            - Refund item amounts exactly as shown in the order's `unit_price` x quantity minus discounts.
              Taxes are refunded automatically in proportion.
            - Partial refunds are allowed (for example one item of a multi-item order). Several refunds on
              the same order are fine; the tool rejects amounts above the remaining refundable balance.
            - Refunds above **$500** in a single call need a team lead's approval; split them by item only
              when the items really are refunded for different reasons.

            ### Reason text

            Write one sentence that says *what* is refunded and *why*, and reference carrier claims or
            evidence, e.g. "Ridgeline 2P tent - shipment SHP-... damaged in transit, returned to sender
            (claim FDX-...)".

            ## Carrier-damaged shipments

            Refund as soon as the carrier reports the damage and the return; you don't need to wait for the
            package to reach the warehouse. Add the carrier claim number to the reason.

            ## Damaged on arrival (customer received a damaged item)

            See KB-1131. In short: refund or replace without asking for the item back if the item costs
            less than $150 and the customer provides a photo of the damage; above $150 we send a prepaid
            return label first.

            ## After refunding

            - Tell the customer the amount, which payment method(s) it goes back to (KB-1164) and the
              expected timeframe (KB-1170).
            - The customer receives an automatic email with the refund receipt.
            """,
    },
    "KB-1131": {
        "title": "Item arrived damaged or defective",
        "updated_at": "2024-03-28",
        "body": """
            # Item arrived damaged or defective

            Customers sometimes receive an item that is damaged (crushed, torn, punctured) or doesn't work
            (e.g. a sleeping pad valve that leaks, a stove that doesn't ignite).

            ## What we need

            - The order number and which item is affected.
            - **A photo of the damage** for every damaged-on-arrival claim. Customers can upload photos at
              fernhill-outdoor.com/upload or send a link from any photo service. Record the link in the
              refund reason; the refund tool checks for it on damaged-on-arrival refunds over $50.
            - For defects that can't be photographed (leaks), a short description of what happens is enough;
              a video helps but is not required.

            ## Options for the customer

            | Item price | Without return | With return |
            |-----------|----------------|-------------|
            | under $150 | Refund or free replacement once we have the photo | — |
            | $150 and over | — | Prepaid return label; refund or replacement when the carrier scans the return |

            Inflatable gear (pads, pillows) that leaks within the first 60 days counts as defective, not as
            wear, unless the photo shows a puncture from outside.

            ## Field repair first?

            Don't ask customers to patch a brand-new item. You may *mention* that the included repair kit can
            get them through a trip if a replacement can't arrive in time, but the refund or replacement is
            not conditional on trying it.

            ## Warranty after 60 days

            After the return window, defects are handled under the 2-year warranty (KB-1302) with repair or
            replacement, not refunds.
            """,
    },
    "KB-1164": {
        "title": "Refunds on orders paid with several payment methods",
        "updated_at": "2024-01-09",
        "body": """
            # Refunds on orders paid with several payment methods

            Orders can be paid with a combination of gift cards and one credit/debit card or PayPal account.
            Refunds are split automatically by the refund service; agents can't choose the split.

            ## Order of allocation

            1. **The card (or PayPal) payment is refunded first**, up to the amount that was captured on it.
            2. **Any remainder goes back to the gift card(s)**, most recently used first.

            We refund the card first because card money is "real money" for the customer and gift cards can
            only be spent with us. Each refund call is allocated separately, so after several partial refunds
            the card may be fully refunded and later refunds go to the gift card.

            ## Gift card refunds

            - The amount is added back to the original gift card, even if it has a zero balance or has
              expired; the card's expiry is extended by 12 months.
            - The customer does not need the physical card; the balance is tied to the card number, and it
              is visible in their account under *Payment methods*.

            ## What to tell the customer

            Read the `allocations` field of the refund result and tell the customer how much goes to which
            method, e.g. "$96.90 back to your Visa ending 4417 and $33.05 to your gift card ending 8841".
            """,
    },
    "KB-1170": {
        "title": "How long do refunds take?",
        "updated_at": "2024-02-20",
        "body": """
            # How long do refunds take?

            Our part is fast: refunds are submitted to the payment provider immediately when an agent issues
            them (status `submitted`) and usually confirmed within a few hours (status `settled`). What takes
            time is the customer's bank.

            | Payment method | When the customer sees it |
            |----------------|---------------------------|
            | Gift card | Immediately after the refund is issued |
            | PayPal | Within 24 hours |
            | Credit card (Visa, Mastercard, Amex, Discover) | 3-5 business days; some banks take up to 10 |
            | Debit card | 5-10 business days |

            A refund first appears as a *pending* credit at some banks and as a reversal of the original
            charge at others, in which case the original charge simply disappears from the statement instead
            of a credit being shown. Customers sometimes mistake that for "no refund" - mention it if the
            original charge is still pending on their side.

            If a customer hasn't seen a card refund after 10 business days, send them the refund's
            acquirer reference number (ARN) from the order's refunds list; their bank can trace it.
            """,
    },
    "KB-1206": {
        "title": "Refunding shipping charges",
        "updated_at": "2024-05-02",
        "body": """
            # Refunding shipping charges

            Shipping is charged per order, not per shipment. Whether we refund it depends on why the customer
            didn't get what they paid for.

            | Situation | Refund shipping? |
            |-----------|------------------|
            | Customer returns items they didn't want | No (unless all items are returned within 14 days) |
            | We shipped the wrong item | Yes, full shipping charge |
            | A shipment was lost or damaged by the carrier | Yes, full order shipping charge, even if other shipments arrived |
            | Item arrived damaged / defective | Only if the whole order is refunded |
            | Delivery was late | Only for Express / 2-day orders that missed the guaranteed date |

            Issue the shipping refund as its own `issue_refund` call with a reason that starts with
            "Shipping charge" so that finance can report it separately. Use the `shipping` amount from the
            order totals.

            Agents should offer a shipping refund proactively when the rules above say it applies; customers
            shouldn't have to ask for it.
            """,
    },
    "KB-1077": {
        "title": "Changing the shipping address of an order",
        "updated_at": "2024-04-18",
        "body": """
            # Changing the shipping address of an order

            ## When it's possible

            | Shipment status | Address change |
            |-----------------|----------------|
            | awaiting_pick, picking | Yes, with `update_address` |
            | packed, label created | Only by carrier intercept (FedEx/UPS, $14 fee, ask a team lead) |
            | in transit | Carrier intercept only; not guaranteed |
            | delivered | No |

            The change applies to all shipments of the order that haven't been labelled yet.

            ## How

            1. Confirm the full new address with the customer, including apartment/unit number.
            2. Call `update_address` with the order id and the address fields. The tool validates the
               address with USPS; if validation fails it returns the reason and, where possible,
               suggestions. **Never pick a suggestion yourself** - ask the customer which one is right.
            3. Read back the normalised address from the tool result to the customer.

            ## Things to watch

            - An address change on an order also updates the billing address only if the customer asks.
            - Changing the address of a future order does not change the default address in the customer
              profile; mention that they can update it under *Account → Addresses*.
            - Moves to another state can change sales tax. Oregon has no sales tax; for other destinations
              the tool recalculates tax and shows the new total.
            - For PO boxes only USPS services are available; the tool changes the carrier automatically.
            """,
    },
    "KB-1215": {
        "title": "Shipping options and delivery times",
        "updated_at": "2024-05-30",
        "body": """
            # Shipping options and delivery times

            | Service | Price | Transit time | Order cutoff |
            |---------|-------|--------------|--------------|
            | Standard | $12.95, free over $50 for Summit members and over $99 for everyone | 3-6 business days | 3 pm PT |
            | Express | $24.95 | 2 business days | 1 pm PT |
            | Overnight | $39.95 | 1 business day | 11 am PT |

            Transit time starts when the order ships. Orders placed before the cutoff on a business day ship
            the same day from the warehouse that has all items in stock (Reno NV for the West, Columbus OH
            for the East); otherwise the next business day.

            ## Delivery dates

            - The delivery estimate on the product page already accounts for stock location and cutoffs; use
              it when a customer asks "will it arrive by ...".
            - We don't deliver on Sundays; Saturday delivery exists only for Overnight in some ZIP codes.
            - Express and Overnight dates are guaranteed: if the carrier misses them, the shipping charge is
              refunded (KB-1206).

            ## Split shipments

            If items are stocked in different warehouses, the order ships in several packages. The customer
            pays shipping once per order.
            """,
    },
}


def kb_search(query: str, article_ids: list[str]) -> str:
    """JSON answer of search_kb: the matching articles with their full text."""
    results = [
        {"id": article_id, "title": KB_ARTICLES[article_id]["title"], "updated_at": KB_ARTICLES[article_id]["updated_at"],
         "score": round(0.93 - 0.11 * rank, 2), "body": dedent(KB_ARTICLES[article_id]["body"])}
        for rank, article_id in enumerate(article_ids)
    ]
    return json.dumps({"query": query, "results": results}, indent=2, ensure_ascii=False)


class Store:
    """The order system behind the support agent's tools."""

    def __init__(self) -> None:
        self.orders = store_orders()
        self.customer = store_customer()
        self._refunds = 0

    def get_order(self, order_id: str) -> str:
        return json.dumps(self.orders[order_id], indent=2, ensure_ascii=False)

    def lookup_customer(self, email: str) -> str:
        return json.dumps(self.customer, indent=2, ensure_ascii=False)

    def issue_refund(self, order_id: str, amount: float, reason: str, *, require_photo: bool = False) -> str:
        order = self.orders[order_id]
        if require_photo and "http" not in reason:
            return json.dumps({"error": "POLICY_CHECK_FAILED", "message": (
                "Damaged-on-arrival refunds over $50.00 need photo evidence: include the photo URL in the "
                "reason (KB-1131). No refund was issued.")})
        self._refunds += 1
        remaining = round(amount * 100)
        allocations = []
        for payment in sorted(order["payments"], key=lambda p: p["method"] != "card"):
            available = round(float(payment["captured"]) * 100) - round(float(payment["refunded"]) * 100)
            part = min(available, remaining)
            if part <= 0:
                continue
            payment["refunded"] = _money((round(float(payment["refunded"]) * 100) + part) / 100)
            remaining -= part
            label = f"visa ending {payment['last4']}" if payment["method"] == "card" else (
                f"gift card ending {payment['gift_card_last4']}")
            allocations.append({"payment_id": payment["payment_id"], "method": label, "amount": _money(part / 100)})
        moment = STORE_TODAY + dt.timedelta(minutes=4 * self._refunds)
        refund = {
            "refund_id": f"RF-{order_id[3:]}-{self._refunds}",
            "order_id": order_id,
            "amount": _money(amount),
            "reason": reason,
            "status": "submitted",
            "created_at": _ts(moment),
            "allocations": allocations,
            "arn": f"7441{self._refunds}{order_id[3:]}0{self._refunds * 7}93",
        }
        order["refunds"].append(refund)
        totals = order["totals"]
        totals["refunded"] = _money(float(totals["refunded"]) + amount)
        totals["net"] = _money(float(totals["total"]) - float(totals["refunded"]))
        order["timeline"].append({"at": _ts(moment), "event": "refund_submitted",
                                  "detail": f"{refund['refund_id']} {refund['amount']}"})
        return json.dumps(refund, indent=2, ensure_ascii=False)

    def mark_refunded(self, order_id: str, sku: str, amount: float) -> None:
        for item in self.orders[order_id]["items"]:
            if item["sku"] == sku:
                item["refunded_amount"] = _money(float(item["refunded_amount"]) + amount)

    def update_address(self, order_id: str, address: dict[str, str]) -> str:
        if address["postal_code"] == "97071":
            return json.dumps({"error": "ADDRESS_VALIDATION_FAILED", "message": (
                "USPS: ZIP code 97071 does not belong to BEND, OR (97071 is WOODBURN, OR)."),
                "suggestions": [dict(address, postal_code="97701"), dict(address, postal_code="97702"),
                                dict(address, postal_code="97703")], "order_unchanged": True})
        order = self.orders[order_id]
        normalised = {
            "name": address["name"], "line1": address["line1"].upper(), "line2": address.get("line2", "").upper(),
            "city": address["city"].upper(), "state": address["state"], "postal_code": "97702-1794",
            "country": "US", "phone": order["shipping_address"]["phone"],
        }
        order["shipping_address"] = normalised
        order["timeline"].append({"at": _ts(STORE_TODAY + dt.timedelta(minutes=31)), "event": "address_updated",
                                  "detail": "shipping address changed by support agent"})
        return json.dumps({"order_id": order_id, "status": "updated", "shipping_address": normalised,
                           "validation": {"provider": "USPS", "dpv_confirmed": True, "residential": True},
                           "affected_shipments": ["SHP-1186677-1"], "tax_recalculated": {"old": "0.00", "new": "0.00"}},
                          indent=2)


# ---------------------------------------------------------------------------
# Sample 3: the customer-support agent -- tools and conversation
# ---------------------------------------------------------------------------

SUPPORT_SYSTEM = para(
    """
    You are Fern, the customer support assistant of Fernhill Outdoor Co., an online store for hiking and
    camping gear based in Portland, Oregon. You chat with customers on the website. Today is Monday,
    June 10, 2024; the local time is 4:05 pm PT.

    Your job is to solve the customer's problem in this conversation whenever the policies allow it:
    look up their account and orders, explain what happened, and take the action (refund, address
    change) yourself instead of sending them elsewhere. Be warm, brief and concrete. Use the customer's
    first name. Write in plain sentences; use short lists only for amounts or steps. Never show raw JSON,
    internal ids other than order numbers, or internal notes to the customer.

    Policies and rules:
    - Verify identity before discussing an order: the email address the customer gives must match the
      order's customer email. Do not reveal data of other customers.
    - Follow the knowledge base (search_kb) for refunds, damaged items, shipping and address changes. If the
      knowledge base and these instructions conflict, these instructions win. Search the knowledge base
      before acting on a policy question, even if you think you know the answer; policies change.
    - Refunds: only to the original payment methods. Never promise an amount or date you have not
      confirmed with a tool. Refunds over $500 in one call need a team lead: hand over instead.
    - Address changes: confirm the complete new address with the customer first. If validation fails,
      ask the customer; never guess between suggestions.
    - You cannot create new orders or apply discounts. For product questions you may describe what the
      order data shows, but don't make claims about stock or delivery dates beyond what the knowledge base
      says.
    - If the customer is upset, acknowledge it once and move on to solving the problem.

    Tools:
    - lookup_customer(email): customer profile, loyalty tier and order history.
    - get_order(order_id): the full order including items, shipments with carrier events, payments,
      refunds and timeline. Re-read the order after changing it to confirm the result.
    - search_kb(query): searches the support knowledge base; returns the best matching articles in full.
    - issue_refund(order_id, amount, reason): refunds an amount in USD; the result shows how it was split
      across payment methods. Amounts are checked against what is still refundable.
    - update_address(order_id, name, line1, line2, city, state, postal_code): changes the shipping address of
      an order that has not shipped yet; validates it with USPS.
    """
)

SUPPORT_TOOLS = [
    tool_schema("lookup_customer", "Find a customer by email address.",
                {"email": prop("string", "The customer's email address.")}, ["email"]),
    tool_schema("get_order", "Fetch an order with items, shipments, payments, refunds and timeline.",
                {"order_id": prop("string", "Order number, e.g. FH-1184203.")}, ["order_id"]),
    tool_schema("search_kb", "Search the support knowledge base. Returns matching articles in full.",
                {"query": prop("string", "What to look for, in plain words.")}, ["query"]),
    tool_schema(
        "issue_refund",
        "Refund an amount (USD) on an order to its original payment methods.",
        {
            "order_id": prop("string", "Order number."),
            "amount": prop("number", "Amount in USD, e.g. 129.95.", minimum=0.01),
            "reason": prop("string", "One sentence for finance: what is refunded and why, with evidence/claim ids."),
        },
        ["order_id", "amount", "reason"],
    ),
    tool_schema(
        "update_address",
        "Change the shipping address of an order that has not shipped yet. Validates the address with USPS.",
        {
            "order_id": prop("string", "Order number."),
            "name": prop("string", "Recipient name."),
            "line1": prop("string", "Street address."),
            "line2": prop("string", "Apartment, suite, unit (optional)."),
            "city": prop("string", "City."),
            "state": prop("string", "Two-letter state code."),
            "postal_code": prop("string", "ZIP code."),
        },
        ["order_id", "name", "line1", "city", "state", "postal_code"],
    ),
]


def support_agent() -> dict[str, Any]:
    """A support agent handles a damaged tent, a faulty pad, a move and refund questions."""
    store = Store()
    first, second = "FH-1184203", "FH-1186677"

    def customer(email: str) -> Call:
        return Call("lookup_customer", {"email": email}, store.lookup_customer(email))

    def order(order_id: str) -> Call:
        return Call("get_order", {"order_id": order_id}, store.get_order(order_id))

    def kb(query: str, *article_ids: str) -> Call:
        return Call("search_kb", {"query": query}, kb_search(query, list(article_ids)))

    def refund(order_id: str, amount: float, reason: str, sku: str | None = None, photo: bool = False) -> Call:
        result = store.issue_refund(order_id, amount, reason, require_photo=photo)
        if sku and '"error"' not in result:
            store.mark_refunded(order_id, sku, amount)
        return Call("issue_refund", {"order_id": order_id, "amount": amount, "reason": reason}, result)

    def move(postal_code: str) -> Call:
        address = {"name": "Maya Lindqvist", "line1": "1460 NW Portland Ave", "line2": "Unit 12", "city": "Bend",
                   "state": "OR", "postal_code": postal_code}
        return Call("update_address", {"order_id": second, **address}, store.update_address(second, address))

    chat = Chat("support", SUPPORT_TOOLS)
    chat.system(SUPPORT_SYSTEM)
    chat.user(
        "hi, I ordered a tent, sleeping pad and two mugs on May 28 (order FH-1184203). the pad and mugs came "
        "last week but the tent never showed up and the fedex tracking hasn't changed in like a week. what's "
        "going on?? my email is maya.lindqvist@example.net"
    )
    chat.step(customer("maya.lindqvist@example.net"), order(first),
              say="Let me pull up your account and that order.")
    chat.step(kb("carrier reported package damaged in transit, returning to sender", "KB-1042", "KB-1120", "KB-1215"))
    chat.step(order(second), say="I'll also check your other open order to make sure it isn't affected.")
    chat.reply(
        dedent(
            """
            Thanks, Maya - I found it. Your order shipped in two packages: the sleeping pad and mugs came from
            our Reno warehouse and were delivered, and the tent shipped separately from Columbus, Ohio with
            FedEx. On its way west, FedEx reported the tent's package as damaged at their Salt Lake City
            facility, and it is now being sent back to us rather than delivered. I'm sorry - that's why the
            tracking looked stuck.

            You don't need to do anything with FedEx; we handle the claim. I can either send you a
            replacement tent at no cost or refund the tent ($349.00) right away. Which would you prefer?
            """
        )
    )
    chat.user(
        "ugh. I need it for a trip on the 14th, a replacement from ohio won't make it in time I guess. just "
        "refund the tent then. also while I have you, the sleeping pad has a torn valve, it won't hold air "
        "at all. can I get my money back for that too? I really don't have time to ship stuff back before "
        "the trip"
    )
    chat.step(kb("refund for items in a shipment damaged by the carrier", "KB-1120", "KB-1206", "KB-1042"))
    chat.step(kb("sleeping pad arrived with torn valve, refund without return", "KB-1131", "KB-1120", "KB-1164"))
    chat.step(
        refund(first, 349.00, "Ridgeline 2P tent - shipment SHP-1184203-2 damaged in transit and returned to "
               "sender by FedEx (claim FDX-CLM-55120874).", sku="FH-TNT-RL2-OLV"),
        say="The tent refund is covered by the carrier-damage policy, so I'm issuing that now.",
    )
    chat.step(order(first))
    chat.step(
        refund(first, 129.95, "Alpine Air sleeping pad - arrived with torn valve, customer reports it does not "
               "hold air; defective on arrival.", sku="FH-PAD-AA-R", photo=True)
    )
    chat.step(order(first))
    chat.reply(
        dedent(
            """
            Done: the tent is refunded - $349.00 back to your Visa ending 4417.

            For the sleeping pad I'm sorry too; a torn valve on a new pad counts as defective, and since the
            pad is under $150 you won't have to send it back. I just need a photo of the valve for our
            records. You can upload it at fernhill-outdoor.com/upload or paste a link from any photo service
            here, and I'll refund the $129.95 as soon as I have it.
            """
        )
    )
    chat.user(
        "ok here: https://photos.app.goo.gl/4sQbT9wLmZ2xVh7e8\n\n"
        "also I'm moving this weekend. I have another order coming (the headlamp, FH-1186677), can you send "
        "that to my new place instead? it's 1460 NW Portland Ave, Unit 12, Bend OR 97071"
    )
    chat.step(
        refund(first, 129.95, "Alpine Air sleeping pad - arrived with torn valve, does not hold air; defective on "
               "arrival. Photo: https://photos.app.goo.gl/4sQbT9wLmZ2xVh7e8", sku="FH-PAD-AA-R", photo=True),
        say="Thanks for the photo - issuing the pad refund first.",
    )
    chat.step(order(first))
    chat.step(order(second), kb("change shipping address on an order that has not shipped", "KB-1077", "KB-1215", "KB-1042"))
    chat.step(move("97071"))
    chat.reply(
        dedent(
            """
            The sleeping pad is refunded: $129.95, of which $96.90 goes back to your Visa ending 4417 and
            $33.05 to your gift card ending 8841 (card payments are refunded first, then gift cards).

            Your headlamp order hasn't been packed yet, so I can still change the address - but the postal
            service didn't accept ZIP 97071 for Bend (97071 is Woodburn). Bend uses 97701, 97702 and 97703.
            Could you double-check the ZIP for 1460 NW Portland Ave, Unit 12?
            """
        )
    )
    chat.user("oh oops, 97702. sorry, long week")
    chat.step(move("97702"))
    chat.step(order(second))
    chat.reply(
        dedent(
            """
            No problem at all - it's updated. Your headlamp and batteries (order FH-1186677) will now go to:

            Maya Lindqvist
            1460 NW Portland Ave, Unit 12
            Bend, OR 97702

            It's scheduled to leave our Reno warehouse tomorrow. One tip: this only changes this order; to
            make Bend your default for future orders, update it under Account → Addresses.
            """
        )
    )
    chat.user(
        "perfect thank you! so where does all the money actually go? I paid part of the first order with a "
        "gift card from my sister. and how long until I see it on my visa? also it seems a bit unfair that I "
        "paid $12.95 shipping for a tent that never came"
    )
    chat.step(order(first), kb("refund order paid with gift card and credit card", "KB-1164", "KB-1120", "KB-1206"))
    chat.step(kb("how long until a credit card refund shows up", "KB-1170", "KB-1164", "KB-1120"))
    chat.step(kb("refund shipping charge when a shipment was damaged by the carrier", "KB-1206", "KB-1120", "KB-1215"))
    chat.step(
        refund(first, 12.95, "Shipping charge - shipment SHP-1184203-2 (tent) damaged in transit and returned to "
               "sender by FedEx (claim FDX-CLM-55120874)."),
        say="You're right about the shipping - our policy refunds it when the carrier damages a shipment.",
    )
    chat.step(order(first))
    chat.reply(
        dedent(
            """
            You're right, and I should have offered that earlier - I've refunded the $12.95 shipping as well.
            Here's where everything from order FH-1184203 goes:

            - Tent $349.00 → Visa ending 4417
            - Sleeping pad $129.95 → $96.90 to Visa, $33.05 to the gift card
            - Shipping $12.95 → gift card

            That's $445.90 back to your Visa - the full amount you paid by card - and $46.00 back to the gift
            card ending 8841. The gift card amount is available immediately (it shows under Payment methods in
            your account, no physical card needed). The Visa refund usually shows up within 3-5 business
            days; some banks take up to 10, and some show it as the original charge disappearing rather than
            a new credit.
            """
        )
    )
    chat.user(
        "amazing, thanks Fern. last question, if I order the same tent again right now could it still get "
        "to Bend by friday? or portland I guess, I'm there until thursday"
    )
    chat.step(kb("express shipping delivery time order cutoff", "KB-1215", "KB-1042", "KB-1206"))
    chat.step(kb("which warehouse ships tents, stock location", "KB-1215", "KB-1042", "KB-1077"))
    chat.step(order(first), say="Checking which warehouse the tent shipped from last time.")
    chat.reply(
        dedent(
            """
            Possibly, but it's tight, so I don't want to promise it. Express shipping ($24.95) takes 2
            business days once the order ships, and the cutoff for same-day shipping is 1 pm Pacific - it's
            past that today, so an Express order placed now would ship tomorrow (Tuesday) and arrive around
            Thursday. If the tent is in stock in Reno, Portland by Thursday is realistic; if it has to come
            from Columbus again it may take longer. The product page shows a delivery estimate for your ZIP
            before you pay, so check that date at checkout - and ship it to Portland, since you're there until
            Thursday.

            Overnight ($39.95, 11 am cutoff) would be the safe option if you order tomorrow morning.
            """
        )
    )
    chat.user("ok will check the page. thanks for sorting all of this out so fast!")
    chat.reply(
        "You're welcome, Maya! To recap: $491.90 refunded on order FH-1184203, and the headlamp order is on "
        "its way to Bend. You'll get email receipts for each refund. Have a great trip on the 14th!"
    )
    return chat.to_dict()


# ---------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------


def build_all() -> dict[str, dict]:
    """All samples, keyed by output file name."""
    return {
        "coding_agent.openai.json": coding_agent(),
        "research_agent.openai.json": research_agent(),
        "support_agent.openai.json": support_agent(),
    }


def write_other_formats(name: str) -> None:
    """Offer a sample in the other formats the app reads (Haystack ChatMessage lists), via compaction's writer."""
    try:
        import compaction
    except ImportError:  # building without the package installed: the OpenAI files are still complete
        print("compaction is not importable; skipped the Haystack copies")
        return
    conv = compaction.load(OUT_DIR / name)
    target = name.replace(".openai.json", ".haystack.json")
    with open(OUT_DIR / target, "w", encoding="utf-8") as fh:
        json.dump(compaction.convert(conv, "haystack"), fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    print(f"wrote {target}")


def main() -> None:
    for name, sample in build_all().items():
        with open(OUT_DIR / name, "w", encoding="utf-8") as fh:
            json.dump(sample, fh, indent=1, ensure_ascii=False)
            fh.write("\n")
        print(f"wrote {name}")
        write_other_formats(name)


if __name__ == "__main__":
    main()
