"""Production configuration for Claude Code: the ``env`` block and keys of ``~/.claude/settings.json``, the same
variables as shell exports, and the global ``autoCompactEnabled`` switch.

The names (checked against Claude Code's docs and issues, and the released bundles): ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE``
(it can only lower the threshold, anthropics/claude-code#31806), ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` (2.1.75+) and the
``autoCompactWindow`` setting (2.1.89+, 100,000–1,000,000), ``CLAUDE_CODE_MAX_OUTPUT_TOKENS``, ``DISABLE_MICROCOMPACT``
(the token microcompaction, up to 2.1.63), ``DISABLE_AUTO_COMPACT`` and ``autoCompactEnabled``, which lives in
``~/.claude.json`` (``claude config set -g``), not in settings.json (#24589). Some releases read the override only
from the shell environment, not from settings.json's ``env`` block (#63186): both are given.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from ..strategies._claude_code_versions import SUMMARY_RESERVE_CAP
from ..strategies.claude_code import AUTOCOMPACT_BUFFER
from .base import ResolvedSetup
from .base import Snippet
from .base import register_exporter


def _variables(setup: ResolvedSetup) -> dict[str, str]:
    """The environment variables the setup's parameters set (only those that differ from Claude Code's default)."""
    p = setup.params
    out: dict[str, str] = {}
    if float(p["autocompact_pct_override"]) > 0:
        out["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] = f"{float(p['autocompact_pct_override']):g}"
    if int(p["auto_compact_window"]) > 0:
        out["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = str(int(p["auto_compact_window"]))
    if int(p["max_output_tokens"]) > 0:
        out["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(int(p["max_output_tokens"]))
    variant = p.get("microcompact", p.get("variant"))
    if variant == "off":
        out["DISABLE_MICROCOMPACT"] = "1"
    if p.get("auto_compact_enabled") is False:
        out["DISABLE_AUTO_COMPACT"] = "1"
    return out


def settings(setup: ResolvedSetup) -> dict[str, Any]:
    """The ``~/.claude/settings.json`` object for the setup."""
    out: dict[str, Any] = {}
    if int(setup.params["auto_compact_window"]) > 0:
        out["autoCompactWindow"] = int(setup.params["auto_compact_window"])
    variables = _variables(setup)
    if variables:
        out["env"] = variables
    return out


def export_claude_code(setup: ResolvedSetup) -> list[Snippet]:
    """settings.json, the shell exports and the global switch for a Claude Code setup."""
    p = setup.params
    variables = _variables(setup)
    notes = []
    effective = setup.context_window - SUMMARY_RESERVE_CAP
    if float(p["autocompact_pct_override"]) > 0 and effective > 0 and (
            float(p["autocompact_pct_override"]) >= 100 * (1 - AUTOCOMPACT_BUFFER / effective)):
        notes.append("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE only lowers the threshold (effective window − 13,000): at "
                     "this percentage it changes nothing.")
    if p["context_1m"] == "on":
        notes.append("The 1M window is a model choice: pick a [1m] model (for example `/model sonnet[1m]`).")
    variant = p.get("microcompact", p.get("variant"))
    if variant in ("token", "time"):
        when = "the token rule up to 2.1.63" if variant == "token" else "the time-based rule from 2.1.81"
        notes.append(f"Claude Code picks its microcompaction by release ({when}); no setting forces it, and the "
                     "time-based rule's gap and keep-recent counts are server config.")
    if p.get("claude_code_version"):
        notes.append(f"Replayed as Claude Code {p['claude_code_version']}: install that release to match "
                     f"(`npm install -g @anthropic-ai/claude-code@{p['claude_code_version']}`).")
    body = settings(setup)
    if not body:
        notes.insert(0, "Claude Code's defaults: nothing to set.")
    snippets = [Snippet("json", "~/.claude/settings.json", json.dumps(body, indent=2) + "\n", " ".join(notes))]
    if variables:
        exports = "\n".join(f"export {name}={shlex.quote(value)}" for name, value in variables.items())
        snippets.append(Snippet("text", "Shell, before starting claude", exports + "\n",
                                "Some releases read these from the shell only, not from settings.json's env block."))
    enabled = p.get("auto_compact_enabled", True)
    snippets.append(Snippet("text", "Auto-compact switch (~/.claude.json)",
                            f"claude config set -g autoCompactEnabled {'true' if enabled else 'false'}\n",
                            "autoCompactEnabled is a global config key (/config → Auto-compact), not a settings.json "
                            "key."))
    return snippets


register_exporter("claude_code", frozenset({"auto_compact", "microcompact"}), export_claude_code)
