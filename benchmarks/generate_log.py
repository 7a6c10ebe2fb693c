"""Generate a large, realistic OpenAI-format coding-agent log, deterministically.

The run: a coding agent works through a series of maintenance tasks on a checkout of the Python standard library.
Each LLM call is an assistant message with a short thought and one to three tool calls (read_file, grep, run_tests,
edit_file, list_dir); the tool results are real file contents (with line numbers, as ``cat -n`` prints them), real
grep matches, pytest-style test output and edit confirmations built from those files. Every so often the agent reports
back and the user asks for the next task. The same seed and call count give the same log on the same Python
installation (file contents come from its standard library).

    python benchmarks/generate_log.py --calls 2000 -o /tmp/agent-2000.openai.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import sysconfig
from functools import cache
from pathlib import Path
from typing import Any

#: standard-library modules the agent "works on" (present in every CPython 3.10+)
MODULES = (
    "argparse.py", "ast.py", "bisect.py", "calendar.py", "csv.py", "dataclasses.py", "difflib.py", "enum.py",
    "fractions.py", "functools.py", "heapq.py", "json/decoder.py", "json/encoder.py", "logging/__init__.py",
    "pathlib.py", "shlex.py", "shutil.py", "statistics.py", "string.py", "textwrap.py", "tokenize.py", "typing.py",
    "collections/__init__.py", "configparser.py", "gettext.py", "ipaddress.py", "pprint.py", "queue.py",
)

TASKS = (
    "The CSV sniffer guesses the wrong delimiter on files that quote every field. Find out why and fix it, with a test.",
    "textwrap.shorten drops the placeholder when the width is exactly its length. Please reproduce and fix.",
    "Profile difflib.SequenceMatcher on two 5,000-line files and make get_matching_blocks faster if you can.",
    "Add type hints to the public functions of statistics.py without changing behaviour; run the tests after.",
    "argparse prints the usage twice when a mutually exclusive group is required and empty. Track it down.",
    "fractions.Fraction.limit_denominator returns a worse approximation for some negative inputs. Investigate.",
    "Our logging config loses handlers when dictConfig is called twice with incremental=True. Find the cause.",
    "Make shutil.copytree report which file failed when dirs_exist_ok=True and a copy raises PermissionError.",
)

TOOLS = [
    {"type": "function", "function": {
        "name": "read_file", "description": "Read a file of the repository, with line numbers.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "Path relative to the repository root."},
            "start_line": {"type": "integer", "minimum": 1}, "end_line": {"type": "integer", "minimum": 1}},
            "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "grep", "description": "Search the repository for a regular expression (ripgrep syntax).",
        "parameters": {"type": "object", "properties": {
            "pattern": {"type": "string"}, "path": {"type": "string", "description": "Directory or file to search."}},
            "required": ["pattern"]}}},
    {"type": "function", "function": {
        "name": "run_tests", "description": "Run pytest on the given test selection and return its output.",
        "parameters": {"type": "object", "properties": {"selection": {"type": "string"}}, "required": ["selection"]}}},
    {"type": "function", "function": {
        "name": "edit_file", "description": "Replace an exact snippet of a file with new text.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}},
            "required": ["path", "old", "new"]}}},
    {"type": "function", "function": {
        "name": "list_dir", "description": "List a directory of the repository.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
]

SYSTEM_PROMPT = (
    "You are a senior Python engineer working in a checkout of the CPython standard library (Lib/). You can read "
    "files, search with grep, edit files and run the test-suite with the tools provided. Work in small steps: read "
    "before you edit, keep edits minimal, and run the relevant tests after every change. When a task is done, "
    "summarise what you changed and why, then wait for the next request.\n\nConventions:\n- follow PEP 8 and the "
    "surrounding style;\n- never change public behaviour without a test that shows the bug;\n- prefer the smallest "
    "fix that is obviously right over a clever one;\n- quote file paths and line numbers when you explain a finding."
)

THOUGHTS = (
    "Let me look at how {name} is implemented before changing anything.",
    "The failure points at {path}; I'll read the surrounding code.",
    "I want to see every caller of {name} first.",
    "Running the tests for {module} to see the current state.",
    "That confirms it: {name} handles the edge case in the wrong branch. I'll make the smallest fix.",
    "Before editing, let me check whether {name} is used elsewhere with a different contract.",
    "The traceback mentions line {line}. Reading that region of {path}.",
    "Now I'll rerun the focused tests to verify the change to {name}.",
)


@cache
def source_lines(module: str) -> tuple[str, ...]:
    """The lines of a standard-library file (an empty placeholder module if this Python lacks it)."""
    path = Path(sysconfig.get_paths()["stdlib"]) / module
    try:
        return tuple(path.read_text(encoding="utf-8").splitlines())
    except OSError:
        return (f'"""{module} is not part of this Python installation."""', "", "def placeholder():", "    pass")


def defined_names(module: str) -> list[str]:
    names = [ln.split("(")[0].split()[-1].rstrip(":") for ln in source_lines(module)
             if ln.startswith(("def ", "class "))]
    return names or ["main"]


class Run:
    """The state of the simulated run: a seeded random source and the tool-call counter."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.call_number = 0

    def call_id(self) -> str:
        self.call_number += 1
        return f"call_{self.rng.getrandbits(96):024x}"[:29] + f"{self.call_number:05d}"

    # -------------------------------------------------------------------------------------------- tool results
    def read_file(self, module: str) -> tuple[dict[str, Any], str]:
        lines = source_lines(module)
        start = self.rng.randrange(max(1, len(lines) - 40)) + 1
        end = min(len(lines), start + self.rng.choice((40, 80, 120, 200, 300)))
        body = "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(start, end + 1))
        return {"path": f"Lib/{module}", "start_line": start, "end_line": end}, body

    def grep(self, module: str) -> tuple[dict[str, Any], str]:
        name = self.rng.choice(defined_names(module))
        hits = []
        for other in sorted({module, *self.rng.sample(MODULES, 4)}):
            for n, line in enumerate(source_lines(other), start=1):
                if name in line:
                    hits.append(f"Lib/{other}:{n}:{line.strip()}")
        hits = hits[: self.rng.choice((8, 20, 60))]
        return {"pattern": rf"\b{name}\b", "path": "Lib/"}, "\n".join(hits) or "(no matches)"

    def run_tests(self, module: str) -> tuple[dict[str, Any], str]:
        stem = module.replace("/__init__.py", "").replace(".py", "").replace("/", "_")
        passed, failed = self.rng.randint(20, 400), self.rng.choice((0, 0, 1, 2))
        out = ["============================= test session starts ==============================",
               "platform linux -- Python 3.11.7, pytest-8.3.3, pluggy-1.5.0",
               f"collected {passed + failed} items", "",
               f"Lib/test/test_{stem}.py " + "." * min(passed, 70) + "F" * failed]
        lines = source_lines(module)
        for k in range(failed):
            n = self.rng.randrange(len(lines)) + 1
            context = "\n".join(f"    {lines[i]}" for i in range(max(0, n - 6), n))
            out += ["", "=================================== FAILURES ===================================",
                    f"___________________________ Test{stem.title()}.test_case_{k} ___________________________",
                    context, f">   {lines[n - 1].strip()}",
                    f"E   AssertionError: {self.rng.randint(1, 99)} != {self.rng.randint(100, 999)}",
                    "", f"Lib/{module}:{n}: AssertionError"]
        verdict = f"{failed} failed, {passed} passed" if failed else f"{passed} passed"
        out += [f"========================= {verdict} in {self.rng.uniform(0.2, 9):.2f}s ========================="]
        return {"selection": f"Lib/test/test_{stem}.py"}, "\n".join(out)

    def edit_file(self, module: str) -> tuple[dict[str, Any], str]:
        lines = source_lines(module)
        n = self.rng.randrange(len(lines))
        old = "\n".join(lines[n:n + 3])
        new = old.replace("return", "return  # checked", 1) if "return" in old else old + "\n    # reviewed"
        diff = "\n".join([f"--- a/Lib/{module}", f"+++ b/Lib/{module}", f"@@ -{n + 1},3 +{n + 1},3 @@",
                          *(f"-{x}" for x in old.splitlines()), *(f"+{x}" for x in new.splitlines())])
        return {"path": f"Lib/{module}", "old": old, "new": new}, f"Applied 1 edit to Lib/{module}.\n{diff}"

    def list_dir(self, module: str) -> tuple[dict[str, Any], str]:
        folder = module.rpartition("/")[0] or ""
        entries = sorted({m.rpartition("/")[2] if folder and m.startswith(folder) else m.split("/")[0]
                          for m in MODULES})
        sizes = [f"{len(chr(10).join(source_lines(m))) if m.endswith('.py') else 4096:>8}  {m}" for m in entries]
        return {"path": f"Lib/{folder}"}, "\n".join(sizes)

    # -------------------------------------------------------------------------------------------- messages
    def tool_step(self, module: str) -> list[dict[str, Any]]:
        """One LLM call that uses tools, and the tool results that answer it."""
        kinds = self.rng.choices(("read_file", "grep", "run_tests", "edit_file", "list_dir"), (40, 25, 15, 15, 5),
                                 k=self.rng.choice((1, 1, 1, 2, 3)))
        names = defined_names(module)
        thought = self.rng.choice(THOUGHTS).format(name=self.rng.choice(names), path=f"Lib/{module}",
                                                   module=module.split("/")[0], line=self.rng.randint(1, 900))
        calls, results = [], []
        for kind in kinds:
            arguments, output = getattr(self, kind)(module)
            cid = self.call_id()
            calls.append({"id": cid, "type": "function",
                          "function": {"name": kind, "arguments": json.dumps(arguments, ensure_ascii=False)}})
            results.append({"role": "tool", "tool_call_id": cid, "content": output})
        return [{"role": "assistant", "content": thought, "tool_calls": calls}, *results]

    def report(self, module: str) -> dict[str, Any]:
        name = self.rng.choice(defined_names(module))
        return {"role": "assistant", "content": (
            f"Done. The problem was in `{name}` (Lib/{module}): the edge case fell through to the general branch. "
            f"I changed that branch, added a regression test next to the existing ones, and the focused test run "
            f"passes. Nothing else in the module depends on the old behaviour.")}


def build_log(calls: int = 2000, seed: int = 7) -> dict[str, Any]:
    """The OpenAI chat-completions request of the run's last call: ``{"messages": [...], "tools": [...]}`` holding
    exactly ``calls`` assistant messages (LLM calls)."""
    run = Run(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                      {"role": "user", "content": TASKS[0]}]
    made, task = 0, 0
    module = run.rng.choice(MODULES)
    task_length = run.rng.randint(60, 200)
    while made < calls:
        if task_length == 0 and made < calls - 1:
            messages.append(run.report(module))
            task += 1
            messages.append({"role": "user", "content": TASKS[task % len(TASKS)]})
            module, task_length = run.rng.choice(MODULES), run.rng.randint(60, 200)
        elif made == calls - 1:
            messages.append(run.report(module))
        else:
            if run.rng.random() < 0.15:
                module = run.rng.choice(MODULES)
            messages += run.tool_step(module)
            task_length -= 1
        made += 1
    return {"messages": messages, "tools": TOOLS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="LLM calls (assistant messages) in the log")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("-o", "--output", help="file to write (default: stdout)")
    args = parser.parse_args(argv)
    if args.calls < 1:
        parser.error("--calls must be at least 1")
    text = json.dumps(build_log(args.calls, args.seed), ensure_ascii=False, indent=1)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
