"""Check the Claude Code release table (``compaction/strategies/_claude_code_versions.py``) against the published
bundles: for each release given, fetch ``@anthropic-ai/claude-code@<release>`` with ``npm pack`` (once, into a cache
folder), look for the code each rule depends on in its ``cli.js`` and print what it finds next to what the table says.

    python tools/claude_code_releases.py 2.1.14 2.1.39 2.1.90 [--cache DIR]

Nothing of the bundle is kept in the project; the cache (default ``~/.cache/compaction-lab/claude-code``) holds
the unpacked packages. Releases after 2.1.1xx ship a native binary instead of ``cli.js``: they are reported as such.
The patterns below match the minified code of 2.0.76–2.1.100 (names are minified differently in every release, so
they match shapes and string constants, not names).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tarfile
from pathlib import Path

from compaction.strategies._claude_code_versions import behaviour
from compaction.strategies._claude_code_versions import resolve_version

CACHE = Path.home() / ".cache" / "compaction-lab" / "claude-code"
NAME = r"[\w$]+"


def bundle(release: str, cache: Path) -> str | None:
    """The release's ``cli.js``, fetched once; None when the package has none."""
    folder = cache / release
    script = folder / "package" / "cli.js"
    if not script.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "pack", f"@anthropic-ai/claude-code@{release}", "--silent"], cwd=folder, check=True,
                       capture_output=True)
        archive = next(folder.glob("*.tgz"))
        with tarfile.open(archive) as tar:
            member = next((m for m in tar.getmembers() if m.name == "package/cli.js"), None)
            if member is not None:
                tar.extract(member, folder, filter="data")
        archive.unlink()
    return script.read_text(encoding="utf-8") if script.exists() else None


def _function(code: str, name: str) -> str:
    """The source of ``function name(…){…}`` (braces matched; strings in these functions hold no braces)."""
    at = code.find(f"function {name}(")
    if at < 0:
        return ""
    depth, opening = 0, code.index("{", at)
    end = opening
    for end in range(opening, min(opening + 20_000, len(code))):
        depth += {"{": 1, "}": -1}.get(code[end], 0)
        if depth == 0:
            break
    return code[at:end + 1]


def _measure_function(code: str) -> str:
    """The function the auto-compact check measures the context with."""
    start = code.find("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
    found = re.search(rf'if\({NAME}==="session_memory"(?:\|\|{NAME}==="compact")?\)return!1;if\(!{NAME}\(\)\)return!1;'
                      rf"let {NAME}=({NAME})\({NAME}\)", code[start:start + 3000])
    return _function(code, found.group(1)) if found else ""


def _effective_window_function(code: str) -> str:
    """The function the threshold subtracts 13,000 from (the effective window)."""
    start = code.find("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
    threshold = code[code.rfind("function", 0, start):start]
    found = re.search(rf"let {NAME}=({NAME})\(", threshold)
    return _function(code, found.group(1)) if found else ""


def _per_message(code: str, measure: str) -> str:
    """The body of the estimate's per-message function (where attachments are, or are not, counted)."""
    outer = re.search(rf"\)\+({NAME})\({NAME}\.slice\(", measure)
    if outer is None:
        return ""
    inner = re.search(rf"{NAME}\+=({NAME})\({NAME}\)", _function(code, outer.group(1)))
    return _function(code, inner.group(1)) if inner else ""


def _estimator(code: str) -> str:
    found = re.search(rf'function {NAME}\({NAME}\)\{{if\(typeof {NAME}==="string"\)return {NAME}\({NAME}\);'
                      rf'if\({NAME}\.type==="text"\)return {NAME}\({NAME}\.text\);(.{{0,400}})', code)
    return found.group(1) if found else ""


def found_rules(code: str) -> dict[str, object]:
    """What the bundle shows, rule by rule (the names of ``Behaviour``'s fields)."""
    effective = _effective_window_function(code)
    delta = re.search(r'case"message_delta":\{(.{0,200})', code)
    on_delta = delta.group(1) if delta else ""
    measure, estimator = _measure_function(code), _estimator(code)
    replaced = re.search(rf"message=\{{\.\.\.{NAME}\.message,usage:", on_delta) is not None
    return {
        "estimates_new_messages": ".slice(" in measure,
        "caps_reserve": "Math.min(" in effective,
        "output_unlogged": replaced,
        "counts_attachments": '.type==="attachment"' in _per_message(code, measure),
        "image_tokens": 2000 if 'image")return 2000' in estimator or 'document")return 2000' in estimator else 1334,
        "counts_tool_use": 'type==="tool_use")return' in estimator,
        "anchors_first_record": measure.count("while(") >= 2,
        "reads_window_env": "CLAUDE_CODE_AUTO_COMPACT_WINDOW" in code,
        "reads_window_setting": "autoCompactWindow" in code,
        "has_token_microcompact": "DISABLE_MICROCOMPACT" in code,
        "has_time_microcompact": "tengu_slate_heron" in code,
    }


def server_gated(code: str) -> bool:
    """Whether the token microcompaction is behind the server flag (the table keeps it on through 2.1.20, where
    logged microcompactions show the flag was still off for their users)."""
    return "tengu_cache_plum_violet" in code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("releases", nargs="+")
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args()
    mismatches = 0
    for release in args.releases:
        code = bundle(release, args.cache)
        if code is None:
            print(f"{release}: no cli.js in the package (a native build): not checked")
            continue
        table = behaviour(resolve_version(release, None)[0])
        for rule, seen in found_rules(code).items():
            expected = getattr(table, rule)
            mark = "ok" if seen == expected else "DIFFERS"
            mismatches += seen != expected
            print(f"{release:<8} {rule:<24} bundle: {seen!s:<6} table: {expected!s:<6} {mark}")
        if server_gated(code):
            print(f"{release:<8} {'token microcompaction':<24} behind the server flag tengu_cache_plum_violet "
                  f"(table: {'on' if table.token_microcompact_on else 'off'} by default)")
    print(f"\n{mismatches} rule(s) differ from the table")


if __name__ == "__main__":
    main()
