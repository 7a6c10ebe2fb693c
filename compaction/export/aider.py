"""Production configuration for Aider: the ``.aider.conf.yml`` keys (and the matching command-line options and
environment variables) that govern the chat-history summary."""

from __future__ import annotations

import json

from .base import ResolvedSetup
from .base import Snippet
from .base import register_exporter


def export_aider(setup: ResolvedSetup) -> list[Snippet]:
    """``max-chat-history-tokens`` and ``weak-model`` (and the weak model's metadata when the replay set its input
    limit)."""
    p = setup.params
    budget = int(p["max_chat_history_tokens"])
    weak = str(p["weak_model"])
    lines = ["# .aider.conf.yml (in your home folder, the repository root or the current folder)"]
    if budget:
        lines.append(f"max-chat-history-tokens: {json.dumps(budget)}")
    lines.append(f"weak-model: {json.dumps(weak)}")
    options = ([f"--max-chat-history-tokens {budget}"] if budget else []) + [f"--weak-model {weak}"]
    env = ([f"AIDER_MAX_CHAT_HISTORY_TOKENS={budget}"] if budget else []) + [f"AIDER_WEAK_MODEL={weak}"]
    note = (f"The same on the command line: aider {' '.join(options)}; or in the environment: {' '.join(env)}. "
            + ("" if budget else "Without max-chat-history-tokens aider budgets the main model's input tokens / 16 "
               "within 1,024–8,192. "))
    if p["moved_to_done"] == "every_exchange":
        note += ("The replay moved every exchange to the done messages; aider does that only after a reply whose "
                 "edits it applied, and no setting changes it.")
    snippets = [Snippet("yaml", "Aider .aider.conf.yml", "\n".join(lines) + "\n", note.strip())]
    limit = int(p["weak_model_max_input_tokens"])
    if limit:
        metadata = json.dumps({weak: {"max_input_tokens": limit}}, indent=2)
        snippets.append(Snippet("json", "Aider .aider.model.metadata.json", metadata + "\n",
                                "The weak model's input limit (aider reads this file from the repository root, or "
                                "--model-metadata-file); ChatSummary summarizes the oldest head messages within it "
                                "less 512."))
    return snippets


register_exporter("aider", frozenset({"chat_summary"}), export_aider)
