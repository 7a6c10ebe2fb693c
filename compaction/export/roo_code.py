"""Production configuration for Roo Code: the settings file Roo imports (Settings → About → Import)."""

from __future__ import annotations

import json
from typing import Any

from .base import ResolvedSetup
from .base import Snippet
from .base import register_exporter


def export_roo_code(setup: ResolvedSetup) -> list[Snippet]:
    """Roo Code's ``globalSettings`` for the replayed context management."""
    p = setup.params
    settings: dict[str, Any] = {"autoCondenseContext": setup.info.name == "roo_code.condense"}
    if setup.info.name == "roo_code.condense":
        settings["autoCondenseContextPercent"] = int(p["auto_condense_context_percent"])
        prompt = str(p["custom_condensing_prompt"]).strip()
        if prompt:
            settings["customSupportPrompts"] = {"CONDENSE": prompt}
    code = json.dumps({"globalSettings": settings}, indent=2) + "\n"
    note = "Import it in Settings → About → Import settings (or point roo-cline.autoImportSettingsPath at the file)."
    if setup.info.name == "roo_code.condense":
        note += " A profile's own threshold (profileThresholds) overrides autoCondenseContextPercent."
    if int(p["max_tokens"]):
        note += (f" The reserved output is the model's max tokens ({int(p['max_tokens']):,}): set it in the "
                 "provider profile (modelMaxTokens).")
    if setup.info.name == "roo_code.condense" and p["roo_version"] == "3.17-3.42":
        note += " The replay followed Roo Code 3.17–3.42's condense, which keeps the last 3 messages."
    return [Snippet("json", "Roo Code settings", code, note)]


register_exporter("roo_code", frozenset({"condense", "sliding_window"}), export_roo_code)
