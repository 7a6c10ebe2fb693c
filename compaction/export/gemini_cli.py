"""Production configuration for Gemini CLI: the ``~/.gemini/settings.json`` keys behind chat compression and tool
output masking."""

from __future__ import annotations

import json
from typing import Any

from .base import ResolvedSetup
from .base import Snippet
from .base import register_exporter

#: ``tokenLimit()`` of every Gemini model (Gemma 4 models: 256,000)
GEMINI_TOKEN_LIMIT = 1_048_576


def _masking(setup: ResolvedSetup) -> dict[str, Any]:
    return {"outputMasking": {
        "protectionThresholdTokens": int(setup.params["protection_threshold_tokens"]),
        "minPrunableThresholdTokens": int(setup.params["min_prunable_threshold_tokens"]),
        "protectLatestTurn": bool(setup.params["protect_latest_turn"]),
    }}


def export_gemini_cli(setup: ResolvedSetup) -> list[Snippet]:
    """``settings.json`` for the setup: ``model.compressionThreshold`` and ``tools.truncateToolOutputThreshold``
    (compression), ``contextManagement.tools.outputMasking.*`` (masking)."""
    kind = setup.info.name.split(".", 1)[1]
    settings: dict[str, Any] = {}
    notes: list[str] = []
    masking = kind == "tool_output_masking" or bool(setup.params.get("tool_output_masking"))
    if kind == "chat_compression":
        threshold = float(setup.params["compression_threshold"])
        fraction = round(threshold * setup.context_window / GEMINI_TOKEN_LIMIT, 6)
        settings["model"] = {"compressionThreshold": fraction}
        settings["tools"] = {"truncateToolOutputThreshold": int(setup.params["truncate_tool_output_threshold"])}
        trigger = int(threshold * setup.context_window)
        notes.append(f"Gemini CLI compresses when the last prompt reaches compressionThreshold × its model's token "
                     f"limit ({GEMINI_TOKEN_LIMIT:,} for Gemini models), so {fraction:g} compresses at {trigger:,} "
                     "tokens, as in the replay" + ("" if setup.context_window == GEMINI_TOKEN_LIMIT else
                                                   f" (the replay's window is {setup.context_window:,})") + ".")
        if not masking:
            notes.append("Gemini CLI has no setting that turns tool output masking off (only "
                         "contextManagement.enabled, which replaces both with its newer pipeline); the masking keys "
                         "are left out.")
    if masking:
        settings["contextManagement"] = {"tools": _masking(setup)}
    notes.append("Remote experiment flags of your Google account can override these thresholds; a value set here "
                 "takes precedence only for compressionThreshold.")
    return [Snippet("json", "Gemini CLI ~/.gemini/settings.json (or .gemini/settings.json in the project)",
                    json.dumps(settings, indent=2) + "\n", " ".join(notes))]


register_exporter("gemini_cli", frozenset({"chat_compression", "tool_output_masking"}), export_gemini_cli)
