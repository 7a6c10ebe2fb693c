"""Command line: ``python -m compaction formats|strategies|info|replay|convert`` (the contract in docs/architecture.md).

Every error a user can cause ends with exit status 2 and one line on stderr naming the file, line or field and what
was expected — never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import TextIO

from .conversation import Conversation
from .errors import CompactionError
from .errors import UsageError
from .formats import formats
from .formats import load
from .formats import load_all_conversations
from .formats import write as write_format
from .policy import validate_threshold
from .replay import replay
from .setups import Setup
from .strategies import get_strategy
from .strategies import registry
from .tokens import DEFAULT_COUNTER
from .tokens import counter_specs
from .tokens import resolve_counter

if TYPE_CHECKING:
    from .analysis.costs import PriceModel

#: what ``--context-window`` defaults to where there is one log (replay, sweep), and the fixed defaults of a fleet
WINDOW_HELP = ("default: from the log (its stated window, else its model's from compaction/models.json, else "
               "200,000); `info` shows it")
FLEET_CONTEXT_WINDOW = 200_000
FLEET_PRICE_PRESET = "claude-sonnet-4-6"


def _print_json(value: Any, out: TextIO) -> None:
    json.dump(value, out, ensure_ascii=False, indent=1)
    out.write("\n")


def cmd_formats(args: argparse.Namespace, out: TextIO) -> None:
    known = formats()
    if args.json:
        _print_json([f.to_json() for f in known.values()], out)
        return
    width = max(len(n) for n in known)
    for name, info in known.items():
        mode = "read/write" if info.write else "read"
        out.write(f"{name:<{width}}  {mode:<10}  {info.title}\n")


def cmd_strategies(args: argparse.Namespace, out: TextIO) -> None:
    known = registry()
    if args.json:
        _print_json([s.to_json() for s in known.values()], out)
        return
    for name, info in sorted(known.items()):
        out.write(f"{name}  —  {info.title}\n    {info.summary}\n")
        for p in info.params:
            out.write(f"    --set {p.name}=<{p.type}>  (default {p.default!r})  {p.help}\n")
        out.write("\n")


def _logs(args: argparse.Namespace) -> str | list[str]:
    """The ``log`` argument: one path (a file or a folder), or the list of several."""
    return args.log[0] if len(args.log) == 1 else list(args.log)


def cmd_info(args: argparse.Namespace, out: TextIO) -> None:
    conversations = load_all_conversations(_logs(args), format=args.format)
    warnings = [w.to_json() for c in conversations for w in c.warnings]
    several_files = len({c.source.path for c in conversations}) > 1
    data: dict[str, Any] = {
        "format": conversations[0].format,
        # from a folder or several files, each conversation also says its format and file
        "conversations": [{**c.summary(), **_resolved_json(c),
                           **({"format": c.format, "path": c.source.path} if several_files else {})}
                          for c in conversations],
        "warnings": warnings,
    }
    if args.json:
        _print_json(data, out)
        return
    formats_seen = ", ".join(dict.fromkeys(c.format for c in conversations))
    out.write(f"{', '.join(args.log)}: {formats_seen}, {len(conversations)} conversation(s)\n")
    for c in data["conversations"]:
        out.write(
            f"  [{c['id']}] {c['messages']} messages, {c['llm_calls']} LLM calls, {c['tool_calls']} tool calls, "
            f"{c['tool_results']} tool results; tools: {', '.join(c['tools']) or 'none'}"
            f"{'; provider usage reported' if c['reported_usage'] else ''}"
            f"{'; ' + str(c['log_compactions']) + ' compaction(s) in the log' if c['log_compactions'] else ''}\n"
            f"      window {c['resolved_context_window']['value']:,} ({c['resolved_context_window']['source']}); "
            f"prices {c['price_preset']['value']} ({c['price_preset']['source']})\n"
        )
    for w in warnings:
        where = f"line {w['line']}: " if w.get("line") else ""
        out.write(f"  warning: {where}{w['message']}\n")


def _resolved_json(conv: Conversation) -> dict[str, Any]:
    """What ``info`` adds per conversation: the window and price preset a replay takes when none is given."""
    from .models import resolve_context_window
    from .models import resolve_price_model

    return {"resolved_context_window": resolve_context_window(conv).to_json(),
            "price_preset": resolve_price_model(conv).to_json()}


def _parse_sets(pairs: Sequence[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set expects PARAM=VALUE, got {pair!r}")
        params[key.strip()] = value
    return params


def cmd_replay(args: argparse.Namespace, out: TextIO) -> None:
    info = get_strategy(args.strategy)
    params = info.resolve_params(_parse_sets(args.set))
    if info.policy == "threshold" and args.context_window is not None:
        validate_threshold(args.context_window, args.compact_at, args.compact_to)
    choice = resolve_counter(args.counter)
    if choice.notice:
        print(f"compaction: {choice.notice}", file=sys.stderr)
    conv = load(_logs(args), format=args.format, conversation=args.conversation)
    window = _window(args, conv, announce=args.json)  # the text output names it itself
    if info.policy == "threshold":
        validate_threshold(window, args.compact_at, args.compact_to)
    setup = Setup(info.name, params, context_window=args.context_window, compact_at=args.compact_at,
                  compact_to=args.compact_to, counter=choice.counter.spec)
    rep = replay(conv, setup)
    if args.context_at is not None and not 0 <= args.context_at < len(rep.steps):
        raise UsageError(f"--context-at {args.context_at}: this replay has {len(rep.steps)} LLM calls "
                         f"(0–{len(rep.steps) - 1})")
    if args.json:
        _print_json(rep.to_json(context_at=args.context_at), out)
        return
    s = rep.summary()
    out.write(f"{conv.source.path}: {conv.format}, {len(conv.messages)} messages, {s['llm_calls']} LLM calls\n")
    out.write(f"{info.name} {json.dumps(rep.to_json()['params'], ensure_ascii=False)}  counter {rep.counter.spec}\n")
    out.write(f"context window {rep.context_window:,} ({rep.context_window_source})\n")
    out.write(f"{'step':>5} {'msg':>5} {'uncompacted':>12} {'before':>9} {'sent':>9}  event\n")
    for st in rep.steps:
        event = "compacted" if st.compacted else "declined" if st.declined else ""
        if event or args.all_steps:
            out.write(f"{st.step:>5} {st.message_index:>5} {st.tokens_uncompacted:>12,} {st.tokens_before:>9,} "
                      f"{st.tokens_sent:>9,}  {event} {st.note}\n")
    out.write(
        f"compactions {s['compactions']}, declined {s['declined_triggers']}, peak sent {s['peak_tokens_sent']:,}, "
        f"total sent {s['total_tokens_sent']:,} vs {s['total_tokens_uncompacted']:,} uncompacted "
        f"(saved {s['tokens_saved']:,})\n"
    )
    if args.context_at is not None:
        for item in rep.context_at(args.context_at):
            out.write(f"  [{item.index if item.index is not None else '+'}] {item.fate:<9} {item.message.role:<9} "
                      f"{item.message.preview(100)}\n")


def _window(args: argparse.Namespace, conv: Conversation, announce: bool = True) -> int:
    """``--context-window``, or the log's (its stated window, else its model's, else the default), said on stderr
    when ``announce``."""
    if args.context_window is not None:
        return int(args.context_window)
    from .models import resolve_context_window

    resolved = resolve_context_window(conv)
    if announce:
        print(f"compaction: context window {resolved.value:,} ({resolved.source}): {resolved.note}", file=sys.stderr)
    return int(resolved.value)


def cmd_export(args: argparse.Namespace, out: TextIO) -> None:
    from .export import export

    snippets = export(Setup(args.strategy, _parse_sets(args.set), context_window=args.context_window,
                            compact_at=args.compact_at, compact_to=args.compact_to, counter=args.counter))
    if args.json:
        _print_json([s.to_json() for s in snippets], out)
        return
    for snippet in snippets:
        out.write(f"# {snippet.title} ({snippet.language})\n{snippet.code.rstrip()}\n")
        if snippet.note:
            out.write(f"# note: {snippet.note}\n")
        out.write("\n")


def cmd_convert(args: argparse.Namespace, out: TextIO) -> None:
    conv = load(args.log, format=args.format, conversation=args.conversation)
    value = write_format(conv, args.to)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            _print_json(value, fh)
    else:
        _print_json(value, out)


def _parse_axis(text: str) -> tuple[str, list[Any]]:
    """``name=start:stop:count`` (evenly spaced) or ``name=v1,v2,…``."""
    name, sep, spec = text.partition("=")
    if not sep or not name.strip() or not spec.strip():
        raise UsageError(f"--axis expects NAME=START:STOP:COUNT or NAME=V1,V2,…, got {text!r}")
    try:
        if spec.count(":") == 2:
            start, stop, count = spec.split(":")
            from .analysis.sweep import linspace

            values: list[Any] = linspace(float(start), float(stop), int(count))
        else:
            values = [_number(v) for v in spec.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"--axis {text!r}: expected numbers") from None
    return name.strip(), values


def _number(text: str) -> Any:
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _setups(args: argparse.Namespace) -> list[tuple[str, Setup]]:
    """Named setups from ``--setup LABEL=STRATEGY[:p=v,…]`` or the ``--strategy``/``--set`` shorthand."""
    policy = {"context_window": args.context_window, "compact_at": args.compact_at, "compact_to": args.compact_to,
              "counter": args.counter}
    setups: list[tuple[str, Setup]] = []
    for spec in args.setup or ():
        label, sep, rest = spec.partition("=")
        strategy, _, param_text = rest.partition(":")
        if not sep or not strategy:
            raise UsageError(f"--setup expects LABEL=STRATEGY[:PARAM=VALUE,…], got {spec!r}")
        params = get_strategy(strategy).resolve_params(_parse_sets([p for p in param_text.split(",") if p]))
        setups.append((label, Setup(strategy, params, **policy)))
    if args.strategy:
        params = get_strategy(args.strategy).resolve_params(_parse_sets(args.set))
        setups.append((args.strategy, Setup(args.strategy, params, **policy)))
    if not setups:
        raise UsageError("give --strategy NAME (with --set) or one or more --setup LABEL=STRATEGY[:PARAM=VALUE,…]")
    return setups


def _prices(args: argparse.Namespace, conv: Conversation | None = None) -> PriceModel:
    """``--model``'s preset, or (no ``--model``) the preset of the model ``conv`` names, said on stderr; fleets of
    many logs keep the library's default preset."""
    from .analysis.costs import price_model

    if args.model is None and conv is not None:
        from .models import resolve_price_model

        resolved = resolve_price_model(conv)
        print(f"compaction: prices {resolved.value} ({resolved.source}): {resolved.note}", file=sys.stderr)
        return price_model(resolved.value, ttl=args.ttl)
    return price_model(args.model or FLEET_PRICE_PRESET, ttl=args.ttl)


def _write_rows(rows: list[dict[str, Any]], path: str | None, as_json: bool, out: TextIO) -> None:
    """Rows as CSV (``-o x.csv``; the columns in order of first appearance), JSON (``-o x.json`` or ``--json``), or
    a table on stdout (pandas is imported for the table only)."""
    if path and path.endswith(".json"):
        with open(path, "w", encoding="utf-8") as fh:
            _print_json(rows, fh)
    elif path:
        import csv

        columns = list(dict.fromkeys(k for row in rows for k in row))
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(columns)
            for row in rows:
                writer.writerow(["" if row.get(c) is None else json.dumps(row[c]) if isinstance(row[c], (dict, list))
                                 else row[c] for c in columns])
    elif as_json:
        _print_json(rows, out)
    else:
        import pandas as pd

        out.write(pd.DataFrame(rows).to_string(index=False) + "\n")


def cmd_sweep(args: argparse.Namespace, out: TextIO) -> None:
    from .analysis.sweep import sweep

    conv = load(args.log, format=args.format, conversation=args.conversation)
    args.context_window = _window(args, conv)
    (_, setup), *more = _setups(args)
    if more:
        raise UsageError("sweep takes one setup")
    axes = dict(_parse_axis(a) for a in (args.axis or ["compact_at=0.5:0.95:10", "compact_to=0.1:0.6:10"]))
    result = sweep(conv, setup, axes, prices=_prices(args, conv), workers=args.workers,
                   with_information=not args.no_information)
    best = result.best(safety=args.safety, max_compactions=args.max_compactions)
    if args.json and not args.output:
        _print_json({"axes": result.axes, "rows": result.rows, "best": best}, out)
        return
    _write_rows(result.rows, args.output, False, out)
    for row in best:
        out.write(f"#{row['rank']} {row['why']}\n")
    if not best:
        out.write("no configuration meets the constraints (peak ≤ window × safety, compactions ≤ max)\n")


def _fleet_axes(specs: Sequence[str], labels: Sequence[str]) -> dict[str, dict[str, list[Any]]]:
    """``--axis [LABEL:]NAME=SPEC`` per setup label: an axis without a label applies to every setup."""
    axes: dict[str, dict[str, list[Any]]] = {label: {} for label in labels}
    for text in specs:
        head, sep, _ = text.partition("=")
        label, colon, _ = head.partition(":")
        name, values = _parse_axis(text[len(label) + 1:] if colon and sep else text)
        if colon and sep:
            if label not in axes:
                raise UsageError(f"--axis {text!r}: no setup is labelled {label!r} (labels: {', '.join(labels)})")
            axes[label][name] = values
        else:
            for chosen in axes.values():
                chosen[name] = values
    return axes


def cmd_fleet(args: argparse.Namespace, out: TextIO) -> None:
    from .analysis.corpus import LOG_SUFFIXES
    from .analysis.corpus import corpus
    from .analysis.fleet import fleet
    from .analysis.fleet_answer import Constraints
    from .analysis.fleet_progress import progress_bar
    from .analysis.fleet_work import NamedSetup
    from .analysis.sweep import grid

    if args.context_window is None:  # one window for logs of any model: say so
        args.context_window = FLEET_CONTEXT_WINDOW
    setups = _setups(args)
    axes = _fleet_axes(args.axis or (), [label for label, _ in setups])
    named = []
    for label, setup in setups:
        for values in grid(axes[label]) if axes[label] else [{}]:
            try:
                setup.info.resolve_params({k: v for k, v in values.items() if k not in ("context_window",
                                                                                         "compact_at", "compact_to")})
            except (ValueError, CompactionError) as exc:
                raise UsageError(f"--axis for {label}: {exc}") from None
            name = f"{label} {' '.join(f'{k}={v}' for k, v in values.items())}" if values else label
            named.append(NamedSetup(name, setup.with_values(values), label, tuple(values.items())))
    if not args.logs and not args.discovered:
        raise UsageError("give log files or folders, or --discovered for every session `discover` finds")
    try:
        logs = corpus(args.logs, discovered=args.discovered)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not logs:
        raise UsageError(f"{', '.join(args.logs) or 'discover'}: no log files ({', '.join(LOG_SUFFIXES)}, "
                         ".aider.chat.history.md)")
    stream = args.output if args.output and not args.output.endswith(".json") else None
    constraints = Constraints(safety=args.safety, max_calls_over_window=args.max_calls_over_window,
                              max_compactions=args.max_compactions, max_information_loss=args.max_information_loss,
                              max_cost_ratio=args.max_cost_ratio, coverage=args.coverage)
    with progress_bar(args.progress or sys.stderr.isatty()) as progress:
        try:
            result = fleet(logs, named, prices=_prices(args), engine=args.engine, workers=args.workers,
                           scheduler=args.scheduler, with_information=not args.no_information, progress=progress,
                           output=stream)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        except KeyboardInterrupt:
            kept = f"; the rows computed so far are in {stream}: run the same command to resume" if stream else ""
            print(f"compaction: interrupted{kept}", file=sys.stderr)
            raise SystemExit(130) from None
    found = result.answer(constraints, open_count=args.open)
    if args.json and not args.output:
        _print_json({"rows": result.rows, "aggregate": result.aggregate(), "answer": found.to_json()}, out)
        return
    if args.output and args.output.endswith(".json"):
        _write_rows(result.rows, args.output, False, out)
    elif not args.output:
        _write_rows(result.rows, None, False, out)
    _write_rows(result.aggregate(), None, False, out)
    for line in found.lines():
        out.write(line + "\n")
    for row in found.open_next:
        out.write(f"open: {row['log']} --conversation {row['conversation']}  ({row['why']})\n")
    for row in result.errors:
        out.write(f"error: {row['log']}: {row['error']}\n")
    if stream:
        print(f"compaction: {result.computed:,} rows computed, {len(result.rows) - result.computed:,} from {stream}",
              file=sys.stderr)


def _add_setup_args(p: argparse.ArgumentParser, single: bool) -> None:
    p.add_argument("--strategy")
    p.add_argument("--set", action="append", metavar="PARAM=VALUE")
    if not single:
        p.add_argument("--setup", action="append", metavar="LABEL=STRATEGY[:P=V,…]")
    else:
        p.set_defaults(setup=None)
    p.add_argument("--context-window", type=int, default=None,
                   help=WINDOW_HELP if single else f"default {FLEET_CONTEXT_WINDOW:,} for every log")
    p.add_argument("--compact-at", type=float, default=0.7)
    p.add_argument("--compact-to", type=float, default=0.4)
    p.add_argument("--counter", default=DEFAULT_COUNTER)
    p.add_argument("--axis", action="append", metavar="NAME=START:STOP:COUNT|V1,V2" if single else
                   "[LABEL:]NAME=START:STOP:COUNT|V1,V2", help=None if single else
                   "sweep a parameter of every setup, or of the setup labelled LABEL")
    p.add_argument("--model", default=None,
                   help="price preset (see compaction/analysis/prices.json); default: the preset of the model the "
                        "log names" if single else f"price preset (default {FLEET_PRICE_PRESET})")
    p.add_argument("--ttl", default="5m", choices=("5m", "1h"))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--no-information", action="store_true", help="skip the information-loss score (faster)")
    p.add_argument("-o", "--output", help="write rows to a .csv or .json file" + ("" if single else
                   "; fleet: .csv (or a .parquet folder) is streamed and is the cache a re-run resumes from"))
    p.add_argument("--json", action="store_true")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m compaction",
                                     description="Replay agent logs under context-compaction strategies.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("formats", help="list the log formats")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_formats)

    p = sub.add_parser("strategies", help="list the strategies and their parameters")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_strategies)

    p = sub.add_parser("info", help="what a log holds")
    p.add_argument("log", nargs="+", help="a log file, a folder of logs, or several of them")
    p.add_argument("--format")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("replay", help="replay a log under a strategy")
    p.add_argument("log", nargs="+", help="a log file, a folder of logs, or several (--conversation picks one)")
    p.add_argument("--strategy", required=True)
    p.add_argument("--set", action="append", metavar="PARAM=VALUE", help="override a strategy parameter")
    p.add_argument("--context-window", type=int, default=None, help=WINDOW_HELP)
    p.add_argument("--compact-at", type=float, default=0.7)
    p.add_argument("--compact-to", type=float, default=0.4)
    p.add_argument("--counter", default=DEFAULT_COUNTER, help=" | ".join(counter_specs()))
    p.add_argument("--format")
    p.add_argument("--conversation")
    p.add_argument("--context-at", type=int, metavar="K", help="also print what call K sent")
    p.add_argument("--all-steps", action="store_true", help="text output: list every step, not only events")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("sweep", help="sweep one or two parameters of a setup over a grid")
    p.add_argument("log")
    _add_setup_args(p, single=True)
    p.add_argument("--format")
    p.add_argument("--conversation")
    p.add_argument("--safety", type=float, default=1.0, help="best setup: peak ≤ window × safety")
    p.add_argument("--max-compactions", type=int, help="best setup: at most this many compactions")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("fleet", help="run setups (or sweeps of them) over a corpus of logs")
    p.add_argument("logs", nargs="*", help="log files and folders of logs (searched recursively)")
    p.add_argument("--discovered", action="store_true", help="also every session `discover` finds on this machine")
    _add_setup_args(p, single=False)
    p.add_argument("--engine", default="local", choices=("local", "dask"))
    p.add_argument("--scheduler", metavar="ADDR", help="a running dask.distributed scheduler, e.g. tcp://host:8786 "
                   "(engine dask; without it a local cluster of --workers processes)")
    p.add_argument("--progress", action="store_true", help="a progress bar on stderr even when it is not a terminal")
    p.add_argument("--safety", type=float, default=1.0, help="best setting: peak ≤ window × safety per session")
    p.add_argument("--max-compactions", type=int, help="best setting: at most this many compactions per session")
    p.add_argument("--max-calls-over-window", type=int, help="best setting: at most this many calls over the window")
    p.add_argument("--max-information-loss", type=int, help="best setting: information-loss score at most this")
    p.add_argument("--max-cost-ratio", type=float, help="best setting: $ ≤ this × the session's uncompacted $")
    p.add_argument("--coverage", type=float, default=1.0,
                   help="best setting: meets the constraints on at least this share of the sessions (default 1)")
    p.add_argument("--open", type=int, default=5, metavar="N", help="sessions to open: how many to list")
    p.set_defaults(func=cmd_fleet)

    p = sub.add_parser("export", help="a setup as production code for its framework")
    p.add_argument("--strategy", required=True)
    p.add_argument("--set", action="append", metavar="PARAM=VALUE")
    p.add_argument("--context-window", type=int, default=200_000)
    p.add_argument("--compact-at", type=float, default=0.7)
    p.add_argument("--compact-to", type=float, default=0.4)
    p.add_argument("--counter", default=DEFAULT_COUNTER)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("convert", help="write a log in another format")
    p.add_argument("log")
    p.add_argument("--to", required=True)
    p.add_argument("-o", "--output")
    p.add_argument("--format")
    p.add_argument("--conversation")
    p.set_defaults(func=cmd_convert)

    from .cli_discover import add_discover_command  # `discover` lives in its own module

    add_discover_command(sub)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = build_parser().parse_args(argv)
    out = out or sys.stdout
    try:
        args.func(args, out)
    except CompactionError as exc:  # a bad log, setting or command: one line naming what was wrong
        print(f"compaction: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    except OSError as exc:  # the output could not be written (-o to a folder that does not exist, a full disk)
        print(f"compaction: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug of ours: a short report, never a user error
        where = traceback.extract_tb(exc.__traceback__)[-1]
        print(f"compaction: internal error: {type(exc).__name__}: {exc} (at {Path(where.filename).name}:"
              f"{where.lineno}). This is a bug in Compaction Lab; please report it with the command you ran.",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
