"""Production configuration for OpenCode: the ``compaction`` block of ``opencode.json``."""

from __future__ import annotations

import json
from typing import Any

from .base import ResolvedSetup
from .base import Snippet
from .base import register_exporter

SCHEMA = "https://opencode.ai/config.json"


def _config(compaction: dict[str, Any]) -> str:
    return json.dumps({"$schema": SCHEMA, "compaction": compaction}, indent=2) + "\n"


def export_opencode(setup: ResolvedSetup) -> list[Snippet]:
    """``opencode.json`` keys that turn on the replayed behaviour, with its settings."""
    p = setup.params
    constants = [f"{name} = {p[name]:,}" for name in ("prune_protect", "prune_minimum")
                 if p[name] != setup.info.defaults()[name]]
    constant_note = (" OpenCode has no setting for " + " and ".join(constants) + ": those are constants of "
                     "compaction.ts." if constants else "")
    if setup.info.name == "opencode.prune":
        code = _config({"auto": False, "prune": True})
        note = ("Prune clears old tool outputs at the end of every turn; `auto: false` leaves the overflow "
                "compaction off, as in this replay." + constant_note)
        return [Snippet("json", "opencode.json", code, note)]
    block: dict[str, Any] = {"auto": True, "prune": bool(p["prune"])}
    for name in ("reserved", "preserve_recent_tokens"):
        if int(p[name]):
            block[name] = int(p[name])
    if int(p["tail_turns"]) >= 0:
        block["tail_turns"] = int(p["tail_turns"])
    if p["mode"] != "prepend":
        block["mode"] = p["mode"]
    snippets = [Snippet("json", "opencode.json", _config(block),
                        f"OpenCode compacts when the last call's tokens reach the usable context of a "
                        f"{setup.context_window:,}-token model." + constant_note)]
    env = []
    if int(p["output_token_max"]) != 32_000:
        env.append(f"export OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX={int(p['output_token_max'])}")
    limits = {"context": setup.context_window, "output": int(p["model_output_limit"])}
    if int(p["model_input_limit"]):
        limits["input"] = int(p["model_input_limit"])
    snippets.append(Snippet("json", "the model's limits (opencode.json, provider models)",
                            json.dumps({"limit": limits}, indent=2) + "\n",
                            "Only for a model models.dev does not describe: put this `limit` under "
                            "provider.<provider>.models.<model> in opencode.json."))
    if env:
        snippets.append(Snippet("text", "environment", "\n".join(env) + "\n", "Caps the max output OpenCode "
                                "reserves from the context."))
    return snippets


register_exporter("opencode", frozenset({"prune", "compaction"}), export_opencode)
