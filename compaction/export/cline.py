"""Production configuration for Cline: the setting that keeps its ContextManager's truncation."""

from __future__ import annotations

import json

from ..strategies.cline import max_allowed_size
from .base import ResolvedSetup
from .base import Snippet
from .base import register_exporter


def export_cline(setup: ResolvedSetup) -> list[Snippet]:
    """Cline's ``useAutoCondense`` off (its default): the ContextManager's duplicate-read and truncation path."""
    window = setup.context_window
    code = json.dumps({"useAutoCondense": False}, indent=2) + "\n"
    note = (f"Settings → Features → Auto Compact off (the state key useAutoCondense, false by default). With a "
            f"{window:,}-token model Cline truncates once the previous request's total reaches "
            f"{max_allowed_size(window):,} tokens; a custom OpenAI-compatible model needs its context window set "
            "in the model settings (Cline assumes 128,000).")
    return [Snippet("json", "Cline settings", code, note)]


register_exporter("cline", frozenset({"context_manager"}), export_cline)
