"""Drives google-adk's real Runner over a log, invocation by invocation, with events compaction on the App.

Runs inside the oracle environment (google-adk installed; not Compaction Lab). Reads ``{"runs": [run, ...]}`` on
stdin, each run one JSON object

    {"agent_name", "config": {compaction_interval, overlap_size, token_threshold, event_retention_size},
     "invocations": [{"user": [part, ...], "responses": [{"parts": [part, ...], "prompt_token_count": int|null}]}],
     "tool_values": {call_id: value}, "summaries": [text, ...]}

A stub model answers each model call with the log's next response (and the prompt token count given for it) and
records the request's contents (past the log's last response, it answers with a final text); each tool returns the value given for its call id; the summarizer's model returns
the given summaries in order and records each summary request. Prints ``{"runs": [result, ...]}``, each result

    {"requests": [[content, ...], ...], "summary_requests": [{"before_call": n, "contents": [content, ...]}, ...],
     "compactions": [{"start_index", "end_index", "text"}], "errors": [...]}

where a compaction's range is given as indices of the session's raw events (timestamps are wall-clock here).
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from typing import Any

warnings.simplefilter("ignore")

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.apps.app import App  # noqa: E402
from google.adk.apps.app import EventsCompactionConfig  # noqa: E402
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.adk.tools.base_tool import BaseTool  # noqa: E402
from google.genai import types  # noqa: E402


def dump(content: types.Content) -> dict[str, Any]:
    return json.loads(content.model_dump_json(exclude_none=True))


#: what the stub models were asked, in order (module state: one driver run per process)
REQUESTS: list = []
SUMMARY_REQUESTS: list = []


class LogModel(BaseLlm):
    """Answers each call with the log's next response; records what each request sent."""

    responses: list = []

    async def generate_content_async(self, llm_request, stream: bool = False):
        REQUESTS.append([dump(c) for c in llm_request.contents])
        # past the log (it stopped after a tool result): a final answer ends the invocation
        response = self.responses.pop(0) if self.responses else {"parts": [{"text": "(past the log)"}]}
        usage = None
        if response.get("prompt_token_count") is not None:
            usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=response["prompt_token_count"])
        content = types.Content(role="model", parts=[types.Part.model_validate(p) for p in response["parts"]])
        yield LlmResponse(content=content, usage_metadata=usage)


class SummaryModel(BaseLlm):
    """Returns the given summaries in order; records each summary request."""

    summaries: list = []

    async def generate_content_async(self, llm_request, stream: bool = False):
        SUMMARY_REQUESTS.append({"before_call": len(REQUESTS),
                              "contents": [dump(c) for c in llm_request.contents]})
        text = self.summaries.pop(0) if self.summaries else "(past the log)"
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


class LogTool(BaseTool):
    """A tool that returns the log's result for the call being answered."""

    def __init__(self, name: str, values: dict[str, Any]) -> None:
        super().__init__(name=name, description=f"{name} (replayed from the log)")
        self.values = values

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name=self.name, description=self.description,
                                         parameters=types.Schema(type=types.Type.OBJECT))

    async def run_async(self, *, args, tool_context):
        return self.values[tool_context.function_call_id]


async def drive(spec: dict[str, Any]) -> dict[str, Any]:
    REQUESTS.clear()
    SUMMARY_REQUESTS.clear()
    model = LogModel(model="log-model")
    model.responses = [r for inv in spec["invocations"] for r in inv["responses"]]
    summary_model = SummaryModel(model="summary-model")
    summary_model.summaries = list(spec["summaries"])
    names = sorted({p["function_call"]["name"] for inv in spec["invocations"] for r in inv["responses"]
                    for p in r["parts"] if "function_call" in p})
    agent = LlmAgent(name=spec["agent_name"], model=model, instruction="",
                     tools=[LogTool(n, spec["tool_values"]) for n in names])
    config = EventsCompactionConfig(summarizer=LlmEventSummarizer(llm=summary_model),
                                    **{k: v for k, v in spec["config"].items() if v is not None})
    app = App(name="oracle_app", root_agent=agent, events_compaction_config=config)
    service = InMemorySessionService()
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name="oracle_app", user_id="u")
    errors: list[str] = []
    for n, invocation in enumerate(spec["invocations"]):
        message = types.Content(role="user", parts=[types.Part.model_validate(p) for p in invocation["user"]])
        try:
            async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                pass
        except Exception as exc:  # reported to the test, which fails on it
            errors.append(f"invocation {n}: {type(exc).__name__}: {exc}")
            break
    if model.responses:
        errors.append(f"{len(model.responses)} responses of the log were never asked for")
    stored = await service.get_session(app_name="oracle_app", user_id="u", session_id=session.id)
    raw = [e for e in stored.events if not (e.actions and e.actions.compaction)]
    stamps = [e.timestamp for e in raw]
    if any(b <= a for a, b in zip(stamps, stamps[1:])):
        errors.append("two raw events share a timestamp: the range comparison would be ambiguous")
    compactions = []
    for e in stored.events:
        c = e.actions.compaction if e.actions else None
        if c is None:
            continue
        text = "".join(p.text or "" for p in (c.compacted_content.parts or []))
        compactions.append({"start_index": stamps.index(c.start_timestamp), "end_index": stamps.index(c.end_timestamp)
                            if c.end_timestamp in stamps else None, "text": text})
    return {"requests": list(REQUESTS), "summary_requests": list(SUMMARY_REQUESTS), "compactions": compactions,
            "errors": errors}


async def main(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [await drive(spec) for spec in runs]


if __name__ == "__main__":
    json.dump({"runs": asyncio.run(main(json.load(sys.stdin)["runs"]))}, sys.stdout, ensure_ascii=False)
