"""Production configuration for Google ADK: the ``EventsCompactionConfig`` of the ``App`` that runs the agent."""

from __future__ import annotations

from .base import ResolvedSetup
from .base import Snippet
from .base import fill_in_line
from .base import kwargs
from .base import py_call
from .base import py_import
from .base import register_exporter

#: what the generated code names the app (ADK: a letter, then letters, digits, ``_`` or ``-``)
APP_NAME = "my_agent_app"


def export_google_adk(setup: ResolvedSetup) -> list[Snippet]:
    """The ``App(..., events_compaction_config=EventsCompactionConfig(...))`` that compacts as the replay did."""
    p = setup.params
    config: list[tuple[str, object]] = []
    if int(p["compaction_interval"]) > 0:
        config += [("compaction_interval", int(p["compaction_interval"])), ("overlap_size", int(p["overlap_size"]))]
    if int(p["token_threshold"]) > 0:
        config += [("token_threshold", int(p["token_threshold"])),
                   ("event_retention_size", int(p["event_retention_size"]))]
    name = str(p["agent_name"]).strip() or "agent"
    agent = f"LlmAgent({', '.join(kwargs([('name', name), ('model', 'gemini-2.5-flash')]))})"
    app = py_call("App", [f"name={APP_NAME!r}", "root_agent=root_agent",
                          "events_compaction_config=" + py_call("EventsCompactionConfig", kwargs(config))])
    code = "\n".join([
        py_import("google.adk.agents", ["LlmAgent"]),
        py_import("google.adk.apps.app", ["App", "EventsCompactionConfig"]),
        "",
        fill_in_line("root_agent", agent, "your agent"),
        f"app = {app}",
        "",
    ])
    note = ("The agent's name is the author ADK writes for its events in the summary request. Run the app with a Runner(app=app, session_service=…). ADK summarizes with an LlmEventSummarizer on the "
            "root agent's model unless you pass summarizer=LlmEventSummarizer(llm=…) to the config. ")
    if any(n == "token_threshold" for n, _ in config):
        note += ("The token threshold reads the prompt token count the model reports (ADK estimates characters / 4 "
                 "when none follows the last summary); the replay took the log's reported counts.")
    return [Snippet("python", "Google ADK App with events compaction", code, note.strip(), fill_in=("root_agent",))]


register_exporter("google_adk", frozenset({"events_compaction"}), export_google_adk)
