"""A fake home folder holding every agent's session layout, for the ``discover`` tests and the app's picker tests.

Each session file gets its own modification time (``BASE_TIME`` + its rank) so the expected newest-first order is
known: the higher ``rank``, the newer.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
#: 2026-01-01T00:00:00Z
BASE_TIME = 1_767_225_600


@dataclass
class FakeHome:
    """The home folder and the paths written into it, by what they are."""

    home: Path
    expected: dict[str, str] = field(default_factory=dict)  # label -> path

    def write(self, label: str, relative: str, data: bytes | str, rank: int) -> Path:
        """Write a file under home, give it the modification time of ``rank`` and remember it as ``label``."""
        path = self.home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        stamp(path, rank)
        if label:
            self.expected[label] = str(path)
        return path

    @property
    def root(self) -> Path:
        """The folder to search for Aider histories."""
        return self.home / "projects"


def stamp(path: Path, rank: int) -> None:
    """Set the modification time of ``path`` to ``BASE_TIME + rank`` hours."""
    os.utime(path, (BASE_TIME + rank * 3600, BASE_TIME + rank * 3600))


def claude_session() -> bytes:
    return (FIXTURES / "claude-code" / "session.jsonl").read_bytes()


def codex_rollout() -> bytes:
    return (FIXTURES / "codex" / "rollout.jsonl").read_bytes()


def gemini_session(session_id: str, kind: str = "main") -> str:
    lines = [{"sessionId": session_id, "projectHash": "ab12", "startTime": "2026-01-01T00:00:00Z", "kind": kind},
             {"id": "m1", "type": "user", "content": [{"text": "hi"}]},
             {"id": "m2", "type": "gemini", "content": "hello", "model": "gemini-2.5-pro",
              "tokens": {"input": 10, "output": 2, "cached": 0, "thoughts": 0, "tool": 0, "total": 12}}]
    return "\n".join(json.dumps(line) for line in lines) + "\n"


CLINE_HISTORY = json.dumps([
    {"role": "user", "content": [{"type": "text", "text": "<task>\nFix the bug\n</task>"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "<read_file>\n<path>a.py</path>\n</read_file>"}]},
    {"role": "user", "content": [{"type": "text", "text": "[read_file for 'a.py'] Result:"},
                                 {"type": "text", "text": "print(1)"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
])
CLINE_UI = json.dumps([{"ts": 1, "type": "say", "say": "api_req_started",
                        "text": json.dumps({"tokensIn": 10, "tokensOut": 5, "cacheWrites": 0, "cacheReads": 0})}])


AIDER_LLM_HISTORY = """TO LLM 2026-01-01T10:00:00
-------
SYSTEM Act as an expert software developer.
-------
USER fix it
LLM RESPONSE 2026-01-01T10:00:05
ASSISTANT Done.
"""


def build(home: Path) -> FakeHome:
    """Every agent's layout under ``home``; Aider histories under ``home/projects`` (:attr:`FakeHome.root`)."""
    fake = FakeHome(home)
    # Claude Code: a session, its subagent side file, an older-style agent file, a second project
    project = ".claude/projects/-home-me-app"
    fake.write("claude main", f"{project}/1111-aaaa.jsonl", claude_session(), 20)
    fake.write("claude subagent", f"{project}/1111-aaaa/subagents/agent-a1b2.jsonl", claude_session(), 19)
    fake.write("claude legacy agent", f"{project}/agent-0042.jsonl", claude_session(), 3)
    fake.write("", f"{project}/1111-aaaa/tool-results/toolu_1.txt", "big output", 1)  # not a session
    fake.write("claude other project", ".claude/projects/-home-me-lib/2222-bbbb.jsonl", claude_session(), 12)
    # Codex: a dated rollout, an archived one, a file that is not a rollout
    fake.write("codex rollout", ".codex/sessions/2026/01/02/rollout-2026-01-02T10-00-00-abc.jsonl", codex_rollout(),
               18)
    fake.write("codex archived", ".codex/archived_sessions/rollout-2025-12-30T09-00-00-def.jsonl", codex_rollout(), 2)
    fake.write("", ".codex/sessions/2026/01/02/notes.txt", "not a rollout", 30)
    # Gemini CLI: a .jsonl session, a legacy .json one, a .json migrated to .jsonl (only the .jsonl counts), a subagent
    chats = ".gemini/tmp/ab12/chats"
    fake.write("gemini main", f"{chats}/session-2026-01-03T08-00-5f3e9a1c.jsonl", gemini_session("5f3e9a1c-0000"), 17)
    fake.write("gemini legacy", f"{chats}/session-2025-12-01T08-00-77aa88bb.json",
               json.dumps({"sessionId": "77aa88bb", "projectHash": "ab12", "messages": []}), 4)
    fake.write("gemini migrated", f"{chats}/session-2025-12-02T08-00-99cc00dd.jsonl", gemini_session("99cc00dd"), 6)
    fake.write("", f"{chats}/session-2025-12-02T08-00-99cc00dd.json", "{}", 5)
    fake.write("gemini subagent", f"{chats}/5f3e9a1c-0000/sub-1.jsonl", gemini_session("sub-1", "subagent"), 16)
    # Cline (VS Code on Linux, a remote server, the CLI) and Roo Code (Cursor on macOS, Windsurf on Windows)
    cline = ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks"
    fake.write("cline task", f"{cline}/1767225600000/api_conversation_history.json", CLINE_HISTORY, 15)
    fake.write("", f"{cline}/1767225600000/ui_messages.json", CLINE_UI, 14)
    fake.write("", f"{cline}/1767000000000/ui_messages.json", CLINE_UI, 40)  # no history: not a session
    fake.write("cline remote", ".vscode-server/data/User/globalStorage/saoudrizwan.claude-dev/tasks/17/"
               "api_conversation_history.json", CLINE_HISTORY, 8)
    fake.write("cline cli", ".cline/data/tasks/18/api_conversation_history.json", CLINE_HISTORY, 7)
    roo = "Library/Application Support/Cursor/User/globalStorage/RooVeterinaryInc.roo-cline/tasks"
    fake.write("roo task", f"{roo}/0197a/api_conversation_history.json", CLINE_HISTORY, 13)
    fake.write("roo windows", "AppData/Roaming/Windsurf/User/globalStorage/rooveterinaryinc.roo-cline/tasks/0198b/"
               "api_conversation_history.json", CLINE_HISTORY, 9)
    # OpenCode's JSON storage: a session with a message and two parts, and its subagent session
    storage = ".local/share/opencode/storage"
    fake.write("opencode session", f"{storage}/session/proj1/ses_main.json",
               json.dumps({"id": "ses_main", "projectID": "proj1", "title": "Refactor"}), 10)
    fake.write("", f"{storage}/message/ses_main/msg_1.json", json.dumps({"id": "msg_1", "role": "user"}), 10)
    fake.write("", f"{storage}/part/msg_1/prt_1.json", json.dumps({"type": "text", "text": "x" * 500}), 11)
    fake.write("", f"{storage}/part/msg_1/prt_2.json", json.dumps({"type": "text", "text": "y"}), 10)
    fake.write("opencode child", f"{storage}/session/proj1/ses_child.json",
               json.dumps({"id": "ses_child", "parentID": "ses_main"}), 1)
    # Aider: a project's histories, and copies inside node_modules and .git (never searched); search root: projects/
    fake.write("aider chat", "projects/webapp/.aider.chat.history.md",
               "# aider chat started at 2026-01-01 10:00:00\n\n#### fix it\n\nDone.\n", 21)
    fake.write("aider llm", "projects/webapp/.aider.llm.history", AIDER_LLM_HISTORY, 22)
    fake.write("", "projects/webapp/node_modules/pkg/.aider.chat.history.md", "# aider chat started at x\n", 23)
    fake.write("", "projects/webapp/.git/.aider.chat.history.md", "# aider chat started at x\n", 24)
    return fake
