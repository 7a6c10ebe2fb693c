"""Production configuration for OpenHands: the ``[condenser]`` section of ``config.toml``."""

from __future__ import annotations

import json

from .base import FILL_IN
from .base import ResolvedSetup
from .base import Snippet
from .base import fill_in_line
from .base import py_call
from .base import register_exporter

OPENHANDS_V0 = {  # registered kind -> (condenser config type, params)
    "observation_masking": ("observation_masking", ("attention_window",)),
    "recent_events": ("recent", ("keep_first", "max_events")),
    "amortized_forgetting": ("amortized", ("keep_first", "max_size")),
    "llm_summarizing": ("llm", ("keep_first", "max_size", "max_event_length")),
}


def export_openhands(setup: ResolvedSetup) -> list[Snippet]:
    """OpenHands V0 ``[condenser]`` TOML, or the V1 SDK ``LLMSummarizingCondenser`` in Python."""
    kind, p = setup.info.name.split(".", 1)[1], setup.params
    if kind == "llm_summarizing_v1":
        args = ["llm=llm.model_copy(update={\"usage_id\": \"condenser\"})", f"max_size={p['max_size']!r}",
                f"keep_first={p['keep_first']!r}"]
        if p["max_tokens"]:
            args.append(f"max_tokens={p['max_tokens']!r}")
        lines = ["from openhands.sdk import LLM, Agent", "from openhands.sdk.context.condenser import LLMSummarizingCondenser",
                 "", fill_in_line("llm", 'LLM(model="anthropic/claude-sonnet-4-5", usage_id="agent")',
                                  "the agent's LLM"),
                 fill_in_line("tools", "[]", "your agent's tools"), "",
                 f"condenser = {py_call('LLMSummarizingCondenser', args)}",
                 "agent = Agent(llm=llm, tools=tools, condenser=condenser)"]
        return [Snippet("python", "OpenHands SDK agent with LLMSummarizingCondenser", "\n".join(lines) + "\n",
                        "The condenser summarizes with a copy of the agent's LLM; pass another LLM to use a cheaper "
                        "model.", ("llm", "tools"))]
    type_name, names = OPENHANDS_V0[kind]
    lines = ["# config.toml", "[condenser]", f"type = {json.dumps(type_name)}"]
    lines += [f"{name} = {int(p[name])}" for name in names]
    note = "OpenHands (V0) reads this from config.toml; the config defaults differ from the class defaults."
    if type_name == "llm":
        lines.insert(3, 'llm_config = "condenser"')
        model = p.get("summarizer_model") or "gpt-4o-mini"
        lines += ["", "[llm.condenser]", f"model = {json.dumps(model)}  # {FILL_IN}: the model that writes summaries"]
    return [Snippet("toml", "OpenHands config.toml: [condenser]", "\n".join(lines) + "\n", note)]


register_exporter("openhands", frozenset({*OPENHANDS_V0, "llm_summarizing_v1"}), export_openhands)
