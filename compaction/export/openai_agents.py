"""Production code for the OpenAI Agents SDK: a session run with ``SessionSettings(limit=...)``."""

from __future__ import annotations

from ..strategies.history_runner import count_or_all
from .base import FILL_IN
from .base import ResolvedSetup
from .base import Snippet
from .base import register_exporter


def export_openai_agents(setup: ResolvedSetup) -> list[Snippet]:
    """``RunConfig(session_settings=SessionSettings(limit=N))`` and the run it is passed to."""
    limit = count_or_all(setup.params["limit"], "limit", "a number of items")
    code = "\n".join([
        "from agents import Agent, RunConfig, Runner, SessionSettings, SQLiteSession",
        "",
        f"run_config = RunConfig(session_settings=SessionSettings(limit={limit!r}))",
        f"session = SQLiteSession('conversation_id', 'conversations.db')  # {FILL_IN}: your session",
        f"agent = Agent(name='Assistant', instructions='...')  # {FILL_IN}: your agent",
        "",
        "result = await Runner.run(agent, user_input, session=session, run_config=run_config)",
    ]) + "\n"
    note = ("openai-agents 0.24.0. The limit counts session items (messages, tool calls, tool outputs, reasoning) and "
            "applies when a run starts; a session can set the same default with "
            f"SQLiteSession(..., session_settings=SessionSettings(limit={limit!r})).")
    return [Snippet("python", "OpenAI Agents SDK run with a session limit", code, note,
                    fill_in=("session", "agent"))]


register_exporter("openai_agents", frozenset({"session_limit"}), export_openai_agents)
