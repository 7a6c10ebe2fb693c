"""``python -m compaction discover``: the agent sessions on this machine, newest first (a table, or ``--json``).

Registered by :func:`compaction.cli.build_parser` through :func:`add_discover_command`. The JSON is a list of
:meth:`FoundSession.to_json` objects: ``path``, ``agent``, ``modified`` (ISO 8601 UTC), ``size`` (bytes; null when
unknown), ``kind``, optionally ``parent``, ``conversation`` and ``where``, and ``llm_calls`` (or ``count_error``)
with ``--count``. Notes on unreadable folders and limits reached go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any
from typing import TextIO

from .discover import AGENTS
from .discover import FoundSession
from .discover import count_llm_calls
from .discover import human_size
from .discover import search


def add_discover_command(sub: Any) -> None:
    """Add the ``discover`` subcommand to the CLI's subparsers."""
    p = sub.add_parser("discover", help="list the agent sessions on this machine, newest first",
                       description="Agent sessions stored under your home folder (honours $HOME and the agents' own "
                       "variables such as $CODEX_HOME), newest first. Looks for: " + "; ".join(
                           f"{layout.title} ({agent})" for agent, layout in AGENTS.items()) + ".")
    p.add_argument("--json", action="store_true", help="a JSON list of {path, agent, modified, size, …}")
    p.add_argument("--root", action="append", metavar="DIR",
                   help="a folder to search for Aider histories (repeatable; default: the current folder)")
    p.add_argument("--agent", action="append", metavar="NAME", choices=list(AGENTS),
                   help=f"only these agents (repeatable): {', '.join(AGENTS)}")
    p.add_argument("--count", action="store_true", help="also read each session and count its LLM calls (slower)")
    p.set_defaults(func=cmd_discover)


def cmd_discover(args: argparse.Namespace, out: TextIO) -> None:
    """Print the sessions found (table or JSON); notes go to stderr."""
    roots = args.root if args.root else [os.getcwd()]
    found = search(roots=roots, agents=args.agent)
    sessions = count_llm_calls(found.sessions) if args.count else found.sessions
    for note in found.notes:
        print(f"compaction: note: {note}", file=sys.stderr)
    if args.json:
        json.dump([s.to_json() for s in sessions], out, ensure_ascii=False, indent=1)
        out.write("\n")
        return
    write_table(sessions, out, counted=args.count)


def write_table(sessions: list[FoundSession], out: TextIO, counted: bool) -> None:
    """One line per session: modified (UTC), agent, kind, size, LLM calls when counted, path."""
    if not sessions:
        out.write("no agent sessions found\n")
        return
    agent_width = max(len(s.agent) for s in sessions)
    out.write(f"{'modified (UTC)':<16}  {'agent':<{agent_width}}  {'kind':<8}  {'size':>9}  "
              f"{'LLM calls  ' if counted else ''}path\n")
    for s in sessions:
        calls = f"{_calls(s):>9}  " if counted else ""
        out.write(f"{s.modified_iso[:16].replace('T', ' '):<16}  {s.agent:<{agent_width}}  {s.kind:<8}  "
                  f"{human_size(s.size):>9}  {calls}{s.path}{_conversation(s)}\n")
    errors = [s for s in sessions if s.count_error]
    for s in errors:
        out.write(f"could not count {s.path}{_conversation(s)}: {s.count_error}\n")


def _calls(session: FoundSession) -> str:
    return f"{session.llm_calls:,}" if session.llm_calls is not None else "error"


def _conversation(session: FoundSession) -> str:
    return f" [{session.conversation}]" if session.conversation else ""
