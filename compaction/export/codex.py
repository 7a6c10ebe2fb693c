"""Production configuration for Codex CLI: ``config.toml``."""

from __future__ import annotations

from .base import ResolvedSetup
from .base import Snippet
from .base import register_exporter


def export_codex(setup: ResolvedSetup) -> list[Snippet]:
    """The Codex CLI ``config.toml`` keys that set the auto-compact limit."""
    limit = int(setup.params["auto_compact_token_limit"])
    lines = ["# ~/.codex/config.toml", f"model_context_window = {setup.context_window}"]
    if limit:
        lines.append(f"model_auto_compact_token_limit = {limit}")
    note = (f"Codex compacts at 90% of the context window ({int(setup.context_window * 0.9)} tokens here)"
            + (f" or at model_auto_compact_token_limit = {limit}, whichever is lower." if limit else ".")
            + " model_context_window only needs setting when Codex does not know the model's window.")
    return [Snippet("toml", "Codex CLI config.toml", "\n".join(lines) + "\n", note)]


register_exporter("codex", frozenset({"auto_compact"}), export_codex)
