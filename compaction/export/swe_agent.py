"""Production configuration for SWE-agent: the history processors of its YAML config."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .base import ResolvedSetup
from .base import Snippet
from .base import register_exporter


def _yaml_processor(p: Mapping[str, Any]) -> str:
    """SWE-agent's ``last_n_observations`` history processor (YAML, values as JSON literals)."""
    return "\n".join([
        "agent:",
        "  history_processors:",
        "    - type: last_n_observations",
        f"      n: {int(p['n'])}",
        f"      polling: {int(p['polling'])}",
        f"      always_remove_output_for_tags: {json.dumps(list(p['always_remove_output_for_tags']))}",
        f"      always_keep_output_for_tags: {json.dumps(list(p['always_keep_output_for_tags']))}",
    ]) + "\n"


def _summary_text(p: Mapping[str, Any]) -> str:
    return (f"Upstream SWE-agent has no LLM-summary history processor. The paper's setup (Lindenbauer et al., "
            f"arXiv 2508.21433) summarizes all but the last {p['keep_last_m_turns']} turns every "
            f"{p['summarize_every_n_turns']} turns with a summarizer model; reproduce it with a custom history "
            "processor, or use a framework that ships one (e.g. OpenHands' LLMSummarizingCondenser).")


def export_swe_agent(setup: ResolvedSetup) -> list[Snippet]:
    kind, p = setup.info.name.split(".", 1)[1], setup.params
    if kind == "last_n_observations":
        return [Snippet("yaml", "SWE-agent config: history_processors", _yaml_processor(p),
                        "Applied to the whole trajectory before every model query (nothing is persisted).")]
    if kind == "hybrid":
        return [Snippet("yaml", "SWE-agent config: the masking half (last_n_observations)", _yaml_processor(p),
                        "The masking half of the hybrid setup."),
                Snippet("text", "The summary half: no direct equivalent", _summary_text(p) + "\n")]
    return [Snippet("text", "No direct equivalent in SWE-agent", _summary_text(p) + "\n")]


register_exporter("swe_agent", frozenset({"last_n_observations", "hybrid", "llm_summary"}), export_swe_agent)
