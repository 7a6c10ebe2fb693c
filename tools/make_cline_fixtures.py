"""Writes the Cline and Roo Code task-folder fixtures (run from the repository root:
``python tools/make_cline_fixtures.py``).

No real Cline or Roo Code task with a licence that allows copying was found (the spec's example,
gmfstu/Online-Card-Architecture, has no licence), so these tasks are written here, in the files' own formats as the
agents' sources write them (Cline ``src/core/task/index.ts``, ``ToolResultUtils``, ``ContextManager``,
``SummarizeTaskHandler``; Roo Code ``Task.ts``, ``presentAssistantMessage.ts``, ``condense/index.ts``,
``context-management/index.ts``): the builder below says each ui message when the agent does, with the history
index it records, and appends each history entry with its timestamp. File contents and outputs are short made-up
stand-ins; the reported token counts are what runs of this length would report.

* ``cline/xml-task``: Cline 3.17 with XML tools, results as a header block plus content blocks, a second call
  answered by the not-run notice, a denied edit, a tool error, a truncation (deleted range in the ui messages,
  notice and duplicate-read edits in ``context_history.json``).
* ``cline/native-task``: Cline 3.51 with native ``tool_use`` blocks, results as one ``[tool] Result:`` text block
  or a ``tool_result`` block, a rejected call and the one skipped after it, a browser screenshot pushed without a
  header, and an automatic ``summarize_task`` condense.
* ``roo-code/xml-task``: Roo Code 3.36 with XML tools, an assistant-role summary among the kept messages
  (``condenseParent`` tags) and a sliding-window truncation marker, both with their ui records.
* ``roo-code/native-task``: Roo Code 3.43+ with native tools, thinking, a JSON error result, a condense whose
  summary is a user message at the end, and ``history_item.json`` of a subtask.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path("tests/fixtures")


class Task:
    """Builds ``api_conversation_history.json`` and ``ui_messages.json`` together, as the agents write them."""

    def __init__(self, start: int, *, history_ts: bool, history_index: bool, model_info: dict | None = None,
                 api_protocol: str | None = None) -> None:
        self.now = start
        self.history: list[dict[str, Any]] = []
        self.ui: list[dict[str, Any]] = []
        self.history_ts = history_ts
        self.history_index = history_index
        self.model_info = model_info
        self.api_protocol = api_protocol
        self.deleted: list[int] | None = None
        self._request: dict[str, Any] | None = None

    def tick(self, ms: int = 1700) -> int:
        self.now += ms
        return self.now

    def say(self, say: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"ts": self.tick(), "type": "say", "say": say}
        if text is not None:
            message["text"] = text
        message.update(extra)
        self._stamp(message)
        self.ui.append(message)
        return message

    def ask(self, ask: str, text: str | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"ts": self.tick(), "type": "ask", "ask": ask}
        if text is not None:
            message["text"] = text
        self._stamp(message)
        self.ui.append(message)
        return message

    def _stamp(self, message: dict[str, Any]) -> None:
        if self.model_info is not None:
            message["modelInfo"] = self.model_info
        if self.history_index:
            message["conversationHistoryIndex"] = len(self.history) - 1
            if self.deleted is not None:
                message["conversationHistoryDeletedRange"] = list(self.deleted)

    def request(self, content: list[dict[str, Any]]) -> None:
        """Say ``api_req_started`` and append the request's user message (in this order, as both agents do)."""
        info: dict[str, Any] = {"request": "\n\n".join(b.get("text", "[Image]") for b in content)}
        if self.api_protocol:
            info = {"apiProtocol": self.api_protocol, **info}
        self._request = self.say("api_req_started", json.dumps(info))
        self.append({"role": "user", "content": content})

    def respond(self, content: list[dict[str, Any]], tokens_in: int, tokens_out: int, cache_writes: int,
                cache_reads: int, cost: float, says: tuple[tuple[str, str], ...] = (), **extra: Any) -> None:
        """Say what the response shows while it streams, fill the request's usage and append the response."""
        assert self._request is not None
        for say, value in says:
            self.say(say, value)
        info = json.loads(self._request["text"])
        info.update(tokensIn=tokens_in, tokensOut=tokens_out, cacheWrites=cache_writes, cacheReads=cache_reads,
                    cost=cost)
        self._request["text"] = json.dumps(info)
        self._request = None
        self.append({"role": "assistant", "content": content, **extra})

    def append(self, message: dict[str, Any]) -> None:
        if self.history_ts:
            message["ts"] = self.tick(900)
        self.history.append(message)

    def write(self, folder: Path, **files: Any) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name, value in {"api_conversation_history.json": self.history, "ui_messages.json": self.ui,
                            **files}.items():
            if value is not None:
                (folder / name).write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


_minutes = iter(range(12, 60))


def cline_env(visible: str, window: str, mode: str = "ACT MODE", files: bool = False) -> dict[str, str]:
    listing = ("\n\n# Current Working Directory (/home/dev/statsapp) Files\nREADME.md\ncli.py\nstats.py\n"
               "tests/\ntests/test_cli.py") if files else ""
    return text(f"<environment_details>\n# VSCode Visible Files\n{visible}\n\n# VSCode Open Tabs\n{visible}\n\n"
                f"# Current Time\n1/25/2025, 10:{next(_minutes)} AM (Europe/Berlin, UTC+1:00){listing}\n\n"
                f"# Context Window Usage\n{window}\n\n# Current Mode\n{mode}\n</environment_details>")


# ------------------------------------------------------------------------------------------------ Cline, XML tools
CLI_PY = '''import argparse
from stats import summarize


def main(argv=None):
    parser = argparse.ArgumentParser(prog="stats")
    parser.add_argument("path")
    args = parser.parse_args(argv)
    numbers = [float(x) for x in open(args.path).read().split()]
    result = summarize(numbers)
    print(f"count={result['count']} mean={result['mean']:.2f}")
'''
STATS_PY = '''def summarize(numbers):
    count = len(numbers)
    return {"count": count, "average": sum(numbers) / count if count else 0.0}
'''
TEST_CLI = '''import json
from cli import main


def test_stats_json(tmp_path, capsys):
    data = tmp_path / "n.txt"
    data.write_text("1 2 3")
    main([str(data), "--json"])
    assert json.loads(capsys.readouterr().out) == {"count": 3, "mean": 2.0}
'''


def cline_xml_task() -> None:
    model = {"providerId": "anthropic", "modelId": "claude-3-7-sonnet-20250219", "mode": "act"}
    task = Task(1737800000000, history_ts=False, history_index=True, model_info=model)
    goal = "Add a --json flag to the stats command in cli.py so scripts can read the summary."
    task.say("text", goal, images=[], files=[])
    task.request([text(f"<task>\n{goal}\n</task>"), cline_env("cli.py", "0 / 200K tokens used (0%)", files=True)])
    task.respond([text("<thinking>\nThe command lives in cli.py; I need to see how it prints the summary.\n"
                       "</thinking>\n\n<read_file>\n<path>cli.py</path>\n</read_file>")], 4, 96, 9210, 0, 0.0360,
                 says=(("tool", json.dumps({"tool": "readFile", "path": "cli.py"})),))

    def result(header: str, body: str, visible: str, window: str, *more: dict[str, str]) -> None:
        task.request([text(f"{header} Result:"), text(body), *more, cline_env(visible, window)])

    result("[read_file for 'cli.py']", CLI_PY, "cli.py", "9,310 / 200K tokens used (5%)")
    task.respond([text("The summary comes from stats.summarize. Let me read it and the tests.\n\n<read_file>\n"
                       "<path>stats.py</path>\n</read_file>\n\n<list_files>\n<path>tests</path>\n</list_files>")],
                 3, 141, 420, 9210, 0.0071)
    task.request([text("[read_file for 'stats.py'] Result:"), text(STATS_PY),
                  text("Tool [list_files] was not executed because a tool has already been used in this message. "
                       "Only one tool may be used per message. You must assess the first tool's result before "
                       "proceeding to use the next tool."), cline_env("stats.py", "9,774 / 200K tokens used (5%)")])
    diff = ("<<<<<<< SEARCH\n    args = parser.parse_args(argv)\n=======\n    parser.add_argument(\"--json\", "
            "action=\"store_true\")\n    args = parser.parse_args(argv)\n>>>>>>> REPLACE")
    task.respond([text(f"I'll add the flag and print JSON when it is set.\n\n<replace_in_file>\n<path>cli.py</path>\n"
                       f"<diff>\n{diff}\n</diff>\n</replace_in_file>")], 3, 212, 310, 9630, 0.0073)
    task.ask("tool", json.dumps({"tool": "editedExistingFile", "path": "cli.py", "diff": diff}))
    task.say("user_feedback", "Keep the plain output as the default; --json only switches the format.")
    result("[replace_in_file for 'cli.py']", "The user denied this operation and provided the following feedback:\n"
           "<feedback>\nKeep the plain output as the default; --json only switches the format.\n</feedback>",
           "cli.py", "10,155 / 200K tokens used (5%)")
    diff2 = ("<<<<<<< SEARCH\n    print(f\"count={result['count']} mean={result['mean']:.2f}\")\n=======\n"
             "    if args.json:\n        print(json.dumps(result))\n    else:\n"
             "        print(f\"count={result['count']} mean={result['mean']:.2f}\")\n>>>>>>> REPLACE")
    task.respond([text(f"Plain output stays the default.\n\n<replace_in_file>\n<path>cli.py</path>\n<diff>\n{diff2}\n"
                       "</diff>\n</replace_in_file>")], 3, 248, 388, 9940, 0.0080,
                 says=(("tool", json.dumps({"tool": "editedExistingFile", "path": "cli.py"})),))
    result("[replace_in_file for 'cli.py']", "The content was successfully saved to cli.py.\n\nHere is the full, "
           "updated content of the file that was saved:\n\n<final_file_content path=\"cli.py\">\n" + CLI_PY +
           "</final_file_content>\n\nIMPORTANT: For any future changes to this file, use the final_file_content "
           "shown above as your reference.", "cli.py", "10,590 / 200K tokens used (5%)")
    task.respond([text("<execute_command>\n<command>python -m pytest tests -q</command>\n<requires_approval>false"
                       "</requires_approval>\n</execute_command>")], 3, 77, 702, 10328, 0.0060,
                 says=(("command", "python -m pytest tests -q"),))
    result("[execute_command for 'python -m pytest tests -q']", "Command executed.\nOutput:\nF....\nFAILED "
           "tests/test_cli.py::test_stats_json - KeyError: 'mean'\n1 failed, 4 passed in 0.21s", "cli.py",
           "11,200 / 200K tokens used (6%)")
    task.respond([text("The test expects a 'mean' key. Let me look at it.\n\n<read_file>\n<path>tests/test_cli.py"
                       "</path>\n</read_file>")], 3, 70, 380, 11030, 0.0056)
    result("[read_file for 'tests/test_cli.py']", TEST_CLI, "tests/test_cli.py", "11,700 / 200K tokens used (6%)")
    task.respond([text("<read_file>\n<path>stats.py</path>\n</read_file>")], 3, 41, 330, 11410, 0.0053)
    result("[read_file for 'stats.py']", STATS_PY, "stats.py", "11,900 / 200K tokens used (6%)")
    bad = "<<<<<<< SEARCH\n    return {\"count\": count, \"avg\": sum(numbers)}\n=======\n    pass\n>>>>>>> REPLACE"
    task.respond([text(f"<replace_in_file>\n<path>stats.py</path>\n<diff>\n{bad}\n</diff>\n</replace_in_file>")],
                 3, 120, 250, 11740, 0.0061)
    result("[replace_in_file for 'stats.py']", "The tool execution failed with the following error:\n<error>\nThe "
           "SEARCH block:\n    return {\"count\": count, \"avg\": sum(numbers)}\n...does not match anything in the "
           "file.\n</error>", "stats.py", "12,210 / 200K tokens used (6%)")
    diff3 = ("<<<<<<< SEARCH\n    return {\"count\": count, \"average\": sum(numbers) / count if count else 0.0}\n"
             "=======\n    return {\"count\": count, \"mean\": sum(numbers) / count if count else 0.0}\n"
             ">>>>>>> REPLACE")
    task.respond([text(f"I'll copy the line exactly.\n\n<replace_in_file>\n<path>stats.py</path>\n<diff>\n{diff3}\n"
                       "</diff>\n</replace_in_file>")], 3, 160, 420, 161200, 0.0590)
    # that request used 161,783 tokens >= 160,000 (200K window - 40K): before the next one Cline dedupes the
    # stats.py reads (saving under 30%), then keeps the first pair and drops half of the rest (messages 2-9); its
    # edits are stamped with that request's ts
    previous_request = [m for m in task.ui if m.get("say") == "api_req_started"][-1]["ts"]
    result("[replace_in_file for 'stats.py']", "The content was successfully saved to stats.py.",
           "stats.py", "161,780 / 200K tokens used (81%)")
    task.deleted = [2, 9]
    task.respond([text("<execute_command>\n<command>python -m pytest tests -q</command>\n<requires_approval>false"
                       "</requires_approval>\n</execute_command>")], 2950, 66, 2100, 9180, 0.0190,
                 says=(("command", "python -m pytest tests -q"),))
    result("[execute_command for 'python -m pytest tests -q']", "Command executed.\nOutput:\n.....\n5 passed in "
           "0.19s", "stats.py", "14,400 / 200K tokens used (7%)")
    task.respond([text("<attempt_completion>\n<result>\nstats now accepts --json and prints the summary as JSON; the "
                       "plain output is unchanged.\n</result>\n</attempt_completion>")], 3, 58, 290, 14100, 0.0056,
                 says=(("completion_result", "stats now accepts --json and prints the summary as JSON."),))
    task.say("user_feedback", "Also document the flag in README.md")
    result("[attempt_completion]", "The user has provided feedback on the results. Consider their input to continue "
           "the task, and then attempt completion again.\n<feedback>\nAlso document the flag in README.md\n"
           "</feedback>", "stats.py", "14,700 / 200K tokens used (7%)")
    readme = ("# statsapp\n\n```\nstats numbers.txt          # count=3 mean=2.00\nstats numbers.txt --json   "
              "# {\"count\": 3, \"mean\": 2.0}\n```\n\nIn an XML config, write the flag as <content>--json</content>.")
    task.respond([text(f"<write_to_file>\n<path>README.md</path>\n<content>\n{readme}\n</content>\n</write_to_file>")],
                 3, 130, 330, 14380, 0.0067)
    result("[write_to_file for 'README.md']", "The content was successfully saved to README.md.", "README.md",
           "15,020 / 200K tokens used (8%)")
    task.respond([text("<attempt_completion>\n<result>\nAdded --json to stats and documented it in README.md.\n"
                       "</result>\n</attempt_completion>")], 3, 45, 260, 14720, 0.0056,
                 says=(("completion_result", "Added --json to stats and documented it in README.md."),))
    notice = ("[NOTE] Some previous conversation history with the user has been removed to maintain optimal context "
              "window length. The initial user task has been retained for continuity, while intermediate "
              "conversation history has been removed. Keep this in mind as you continue assisting the user. Pay "
              "special attention to the user's latest messages.")
    removed = ("[[NOTE] This file read has been removed to save space in the context window. Refer to the latest "
               "file read for the most up to date version of this file.]")
    context_history = [
        [1, [0, [[0, [[previous_request, "text", [notice], []]]]]]],
        [4, [2, [[1, [[previous_request, "text", [removed], []]]]]]],
        [14, [2, [[1, [[previous_request, "text", [removed], []]]]]]],
    ]
    metadata = {
        "files_in_context": [{"path": "cli.py", "record_state": "active", "record_source": "read_tool",
                              "cline_read_date": 1737800003400, "cline_edit_date": None, "user_edit_date": None}],
        "model_usage": [{"ts": 1737800000050, "model_id": "claude-3-7-sonnet-20250219",
                         "model_provider_id": "anthropic", "mode": "act"}],
        "environment_history": [{"ts": 1737800000040, "os_name": "linux", "os_version": "6.8.0", "os_arch": "x64",
                                 "host_name": "Visual Studio Code", "host_version": "1.96.4",
                                 "cline_version": "3.17.9"}],
    }
    task.write(OUT / "cline" / "xml-task", **{"task_metadata.json": metadata, "context_history.json": context_history})


# ------------------------------------------------------------------------------------------------ Cline, native tools
def cline_native_task() -> None:
    model = {"providerId": "anthropic", "modelId": "claude-sonnet-4-5-20250929", "mode": "act"}
    task = Task(1769100000000, history_ts=True, history_index=True, model_info=model)
    ids = iter(f"toolu_01{n:02d}Fx{n * 7:03d}" for n in range(1, 40))

    def env(visible: str, extra: str = "") -> dict[str, str]:
        return text(f"<environment_details>\n# Visual Studio Code Visible Files\n{visible}\n\n# Visual Studio Code "
                    f"Open Tabs\n{visible}\n\n# Current Time\n1/22/2026, 4:10:00 PM (UTC, UTC+0:00){extra}\n\n"
                    "# Current Mode\nACT MODE\n</environment_details>")

    def call(name: str, **arguments: Any) -> dict[str, Any]:
        return {"type": "tool_use", "id": next(ids), "name": name, "input": arguments}

    def metrics(prompt: int, completion: int, cached: int, cost: float) -> dict[str, Any]:
        return {"modelInfo": model, "metrics": {"tokens": {"prompt": prompt, "completion": completion,
                                                           "cached": cached}, "cost": cost}}

    def respond(blocks: list, usage: tuple[int, int, int, int, float], says: tuple = ()) -> list:
        tokens_in, tokens_out, writes, reads, cost = usage
        task.respond(blocks, *usage, says=says, **metrics(tokens_in, tokens_out, writes + reads, cost))
        return blocks

    goal = "The landing page's signup button does nothing on mobile. Find out why and fix it."
    task.say("text", goal, images=[], files=[])
    task.request([text(f"<task>\n{goal}\n</task>"), env("src/Signup.tsx", "\n\n# Current Working Directory "
                                                         "(/workspaces/site) Files\npackage.json\nsrc/\nsrc/Signup.tsx\n"
                                                         "src/styles.css")])
    respond([{"type": "thinking", "thinking": "Start with the component, then the styles.", "signature": "Eo8"},
                     text("I'll look at the signup component first."),
                     call("read_file", path="src/Signup.tsx"), call("read_file", path="src/styles.css")],
                    (10, 180, 8820, 0, 0.0360))
    component = ("export function Signup() {\n  return <button className=\"cta\" onClick={open}>Sign up</button>\n}\n")
    task.request([text(f"[read_file for 'src/Signup.tsx'] Result:\n{component}"),
                  text("Tool [read_file] was not executed because a tool has already been used in this message. Only "
                       "one tool may be used per message. You must assess the first tool's result before proceeding "
                       "to use the next tool."), env("src/Signup.tsx")])
    respond([call("read_file", path="src/styles.css")], (10, 60, 410, 8820, 0.0055))
    styles = ".hero::after { content: ''; position: absolute; inset: 0; }\n.cta { position: relative; }\n"
    task.request([text(f"[read_file for 'src/styles.css'] Result:\n{styles}"), env("src/styles.css")])
    edit = respond([text("The hero overlay covers the button. I'll let clicks pass through it and run the tests."),
                    call("replace_in_file", path="src/styles.css", diff="------- SEARCH\ninset: 0; }\n=======\n"
                         "inset: 0; pointer-events: none; }\n+++++++ REPLACE"),
                    call("execute_command", command="npm test", requires_approval=False)],
                   (10, 240, 520, 9230, 0.0081))
    task.ask("tool", json.dumps({"tool": "editedExistingFile", "path": "src/styles.css"}))
    task.say("user_feedback", "Fix it in the component instead, not in global styles.")
    task.request([{"type": "tool_result", "tool_use_id": edit[1]["id"], "call_id": "",
                   "content": "[replace_in_file for 'src/styles.css'] Result:\nThe user denied this operation and "
                              "provided the following feedback:\n<feedback>\nFix it in the component instead, not "
                              "in global styles.\n</feedback>"},
                  text("Skipping tool due to user rejecting a previous tool. [execute_command for 'npm test']"),
                  env("src/styles.css")])
    respond([text("I'll raise the button above the overlay in the component."),
             call("replace_in_file", path="src/Signup.tsx", diff="------- SEARCH\nclassName=\"cta\"\n=======\n"
                  "className=\"cta\" style={{ zIndex: 1 }}\n+++++++ REPLACE")], (10, 150, 600, 9750, 0.0070))
    task.request([text("[replace_in_file for 'src/Signup.tsx'] Result:\nThe content was successfully saved to "
                       "src/Signup.tsx."), env("src/Signup.tsx")])
    respond([call("browser_action", action="launch", url="http://localhost:5173")], (10, 70, 380, 10350, 0.0059))
    task.request([text("The browser action has been executed. The console logs and screenshot have been captured for "
                       "your analysis.\n\nConsole logs:\n(No new logs)\n\n(REMEMBER: if you need to proceed to using "
                       "non-`browser_action` tools or launch a new browser, you MUST first close this browser.)"),
                  {"type": "image", "source": {"type": "base64", "media_type": "image/webp",
                                               "data": "UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAwA0JaQAA3AA/vuUAAA="}},
                  env("src/Signup.tsx")])
    summarize = ("<explicit_instructions type=\"summarize_task\">\nThe current conversation is rapidly running out of "
                 "context. Now, your urgent task is to create a comprehensive detailed summary of the conversation "
                 "so far, paying close attention to the user's explicit requests and your previous actions.\n"
                 "...\n</explicit_instructions>\n")
    respond([call("browser_action", action="click", coordinate="200,640")], (10, 90, 1610, 10730, 0.0120))
    task.request([text("[browser_action for 'click'] Result:\nThe browser action has been executed. The signup "
                       "dialog opened."), text(summarize)])
    context = ("1. Primary Request and Intent:\n   The signup button on the landing page did nothing on mobile.\n"
               "2. Key Technical Concepts:\n   - a ::after overlay on .hero intercepting clicks\n"
               "3. Files and Code Sections:\n   - src/Signup.tsx: the button now has zIndex 1\n"
               "4. Problem Solving:\n   The overlay covered the button; the user wanted the fix in the component.\n"
               "5. Pending Tasks:\n   - run the tests\n7. Current Work:\n   Verified in the browser that the dialog "
               "opens.\n8. Next Step:\n   Close the browser and run npm test.\n9. Required Files:\n   - src/Signup.tsx")
    respond([call("summarize_task", context=context)], (10, 420, 980, 151300, 0.0630),
            says=(("tool", json.dumps({"tool": "summarizeTask", "content": context})),))
    task.deleted = [2, 13]
    continuation = ("\nThis session is being continued from a previous conversation that ran out of context. The "
                    f"conversation is summarized below:\n{context}.\n\nPlease continue the conversation from where we "
                    "left it off without asking the user any further questions. Continue with the last task that you "
                    "were asked to work on.\n")
    task.request([text(f"[summarize_task] Result:\n{continuation}"), env("src/Signup.tsx")])
    respond([call("browser_action", action="close")], (2400, 40, 3100, 0, 0.0210))
    task.request([text("[browser_action for 'close'] Result:\nThe browser has been closed. You may now proceed to using "
                       "other tools."), env("src/Signup.tsx")])
    respond([call("execute_command", command="npm test", requires_approval=False)], (10, 40, 210, 5500, 0.0030))
    task.request([text("[execute_command for 'npm test'] Result:\nCommand executed.\nOutput:\n 4 passed (4)"),
                  env("src/Signup.tsx")])
    respond([text("The fix is in place."),
             call("attempt_completion", result="The hero overlay covered the signup button on small screens; the "
                  "button is now raised above it in src/Signup.tsx and the tests pass.")], (10, 70, 160, 5710, 0.0032),
            says=(("completion_result", "The signup button is raised above the hero overlay."),))
    metadata = {
        "files_in_context": [],
        "model_usage": [{"ts": 1769100000030, "model_id": "claude-sonnet-4-5-20250929",
                         "model_provider_id": "anthropic", "mode": "act"}],
        "environment_history": [{"ts": 1769100000020, "os_name": "linux", "os_version": "6.8.0-1030-azure",
                                 "os_arch": "x64", "host_name": "Visual Studio Code", "host_version": "1.108.1",
                                 "cline_version": "3.51.0"}],
    }
    task.write(OUT / "cline" / "native-task", **{"task_metadata.json": metadata})


# ------------------------------------------------------------------------------------------------ Roo Code, XML tools
def roo_env(visible: str, model: str, cost: str) -> dict[str, str]:
    return text(f"<environment_details>\n# VSCode Visible Files\n{visible}\n\n# VSCode Open Tabs\n{visible}\n\n"
                f"# Current Time\nCurrent time in ISO 8601 UTC format: 2025-12-12T09:30:00.000Z\nUser time zone: "
                f"Europe/Paris, UTC+1:00\n\n# Current Cost\n{cost}\n\n# Current Mode\n<slug>code</slug>\n"
                f"<name>💻 Code</name>\n<model>{model}</model>\n</environment_details>")


def roo_xml_task() -> None:
    model = "claude-sonnet-4-5"
    task = Task(1765531800000, history_ts=True, history_index=False, api_protocol="anthropic")
    goal = "Rename the `fetchUser` helper to `loadUser` everywhere in src/."
    task.say("text", goal, images=[])
    task.request([text(f"<task>\n{goal}\n</task>"), roo_env("src/api.ts", model, "$0.00")])
    read_header = ("[read_file for 'src/api.ts'. Reading multiple files at once is more efficient for the LLM. If "
                   "other files are relevant to your current task, please read them simultaneously.]")
    task.respond([text("I'll find every use first.\n\n<search_files>\n<path>src</path>\n<regex>fetchUser</regex>\n"
                       "</search_files>")], 9050, 80, 9046, 0, 0.0350)
    usages = "Found 3 results.\n\n# src/api.ts\n  4 | export async function fetchUser(id: string) {\n\n# " \
             "src/Profile.tsx\n  2 | import { fetchUser } from './api'\n 11 |   const user = await fetchUser(id)"
    task.request([text("[search_files for 'fetchUser'] Result:"), text(usages), roo_env("src/api.ts", model, "$0.04")])
    task.respond([text("<read_file>\n<args>\n  <file>\n    <path>src/api.ts</path>\n  </file>\n</args>\n</read_file>")],
                 9420, 60, 380, 9040, 0.0061)
    api_ts = "<files>\n<file><path>src/api.ts</path>\n<content lines=\"1-6\">\n1 | const base = '/api'\n" \
             "4 | export async function fetchUser(id: string) {\n5 |   return (await fetch(`${base}/u/${id}`)).json()\n" \
             "6 | }\n</content>\n</file>\n</files>"
    task.request([text(f"{read_header} Result:"), text(api_ts), roo_env("src/api.ts", model, "$0.05")])
    task.respond([text("<apply_diff>\n<path>src/api.ts</path>\n<diff>\n<<<<<<< SEARCH\n:start_line:4\n-------\n"
                       "export async function fetchUser(id: string) {\n=======\nexport async function loadUser(id: "
                       "string) {\n>>>>>>> REPLACE\n</diff>\n</apply_diff>\n\n<apply_diff>\n<path>src/Profile.tsx"
                       "</path>\n<diff>\n...\n</diff>\n</apply_diff>")], 9720, 190, 300, 9420, 0.0085)
    task.request([text("[apply_diff for 'src/api.ts'] Result:"), text("Changes successfully applied to src/api.ts."),
                  text("Tool [apply_diff] was not executed because a tool has already been used in this message. Only "
                       "one tool may be used per message. You must assess the first tool's result before proceeding "
                       "to use the next tool."), roo_env("src/api.ts", model, "$0.06")])
    task.respond([text("<apply_diff>\n<path>src/Profile.tsx</path>\n<diff>\n<<<<<<< SEARCH\n:start_line:2\n-------\n"
                       "import { fetchUser } from './api'\n=======\nimport { loadUser } from './api'\n>>>>>>> REPLACE"
                       "\n</diff>\n</apply_diff>")], 10130, 160, 410, 9720, 0.0080)
    task.request([text("[apply_diff for 'src/Profile.tsx'] Result:"),
                  text("Changes successfully applied to src/Profile.tsx."), roo_env("src/Profile.tsx", model, "$0.07")])
    task.respond([text("<apply_diff>\n<path>src/Profile.tsx</path>\n<diff>\n<<<<<<< SEARCH\n:start_line:11\n-------\n"
                       "  const user = await fetchUser(id)\n=======\n  const user = await loadUser(id)\n>>>>>>> REPLACE"
                       "\n</diff>\n</apply_diff>")], 10450, 150, 320, 10130, 0.0077)
    task.request([text("[apply_diff for 'src/Profile.tsx'] Result:"),
                  text("Changes successfully applied to src/Profile.tsx."), roo_env("src/Profile.tsx", model, "$0.08")])
    # over the limit with auto-condense off: the sliding window hides half of the visible messages after the
    # first (rounded down to even) and inserts a marker before the first one kept
    visible = [i for i, m in enumerate(task.history) if "truncationParent" not in m and not m.get("isTruncationMarker")]
    hide = (len(visible) - 1) // 2
    hide -= hide % 2
    truncation_id = "9e0b7c52-0d7e-4f0e-8d43-55c0f1a7d6a2"
    for i in visible[1:hide + 1]:
        task.history[i]["truncationParent"] = truncation_id
    first_kept = visible[hide + 1]
    task.say("sliding_window_truncation", contextTruncation={"truncationId": truncation_id, "messagesRemoved": hide,
                                                              "prevContextTokens": 10930, "newContextTokens": 6150})
    task.history.insert(first_kept, {"role": "user", "content": f"[Sliding window truncation: {hide} messages hidden "
                                     "to reduce context]", "ts": task.history[first_kept]["ts"] - 1,
                                     "isTruncationMarker": True, "truncationId": truncation_id})
    task.respond([text("<execute_command>\n<command>npx tsc --noEmit</command>\n</execute_command>")],
                 6200, 70, 6196, 0, 0.0240, says=(("command", "npx tsc --noEmit"),))
    task.request([text("[execute_command for 'npx tsc --noEmit'] Result:"),
                  text("Command executed in terminal  within working directory '/home/ana/web'. Exit code: 2\nOutput:\n"
                       "src/Settings.tsx(8,10): error TS2305: Module './api' has no exported member 'fetchUser'."),
                  roo_env("src/Profile.tsx", model, "$0.11")])
    task.respond([text("One more use in Settings.tsx.\n\n<apply_diff>\n<path>src/Settings.tsx</path>\n<diff>\n"
                       "<<<<<<< SEARCH\n:start_line:8\n-------\nimport { fetchUser } from './api'\n=======\nimport "
                       "{ loadUser } from './api'\n>>>>>>> REPLACE\n</diff>\n</apply_diff>")],
                 6480, 150, 290, 6190, 0.0040)
    task.request([text("[apply_diff for 'src/Settings.tsx'] Result:"),
                  text("Changes successfully applied to src/Settings.tsx."), roo_env("src/Settings.tsx", model, "$0.12")])
    # the profile's auto-condense threshold (3% of the window) is reached: Roo summarizes all but the first and the
    # last 3 messages, inserts the summary (an assistant message) before those 3 and tags the ones it replaces
    summary = ("## Conversation Summary\n1. Previous Conversation: the user asked to rename fetchUser to loadUser in "
               "src/.\n2. Current Work: src/api.ts, src/Profile.tsx and src/Settings.tsx are renamed.\n3. Next Steps: "
               "run the type check again.")
    condense_id = "5c1d1f0a-8a0e-4c67-9a55-1f3f5f0e2b11"
    task.say("condense_context", partial=False,
             contextCondense={"cost": 0.021, "prevContextTokens": 6920, "newContextTokens": 2480, "summary": summary,
                              "condenseId": condense_id})
    keep_start = len(task.history) - 3
    for entry in task.history[1:keep_start]:
        entry.setdefault("condenseParent", condense_id)
    task.history.insert(keep_start, {"role": "assistant", "content": [text(summary)],
                                     "ts": task.history[keep_start]["ts"] - 1, "isSummary": True,
                                     "condenseId": condense_id})
    task.respond([text("<execute_command>\n<command>npx tsc --noEmit</command>\n</execute_command>")],
                 2900, 60, 2890, 0, 0.0120, says=(("command", "npx tsc --noEmit"),))
    task.request([text("[execute_command for 'npx tsc --noEmit'] Result:"),
                  text("Command executed in terminal  within working directory '/home/ana/web'. Exit code: 0\n"
                       "Output:\n"), roo_env("src/Settings.tsx", model, "$0.15")])
    task.respond([text("<attempt_completion>\n<result>\nfetchUser is now loadUser in src/api.ts, src/Profile.tsx and "
                       "src/Settings.tsx; the type check passes.\n</result>\n</attempt_completion>")],
                 3100, 50, 200, 2890, 0.0030, says=(("completion_result", "fetchUser is now loadUser in src/."),))
    task.write(OUT / "roo-code" / "xml-task")


# ------------------------------------------------------------------------------------------------ Roo Code, native tools
def roo_native_task() -> None:
    model = "claude-sonnet-4-5"
    task = Task(1771000000000, history_ts=True, history_index=False, api_protocol="anthropic")
    ids = iter(f"toolu_vrtx_01{n:02d}Qm{n * 3:03d}" for n in range(1, 40))

    def call(name: str, **arguments: Any) -> dict[str, Any]:
        return {"type": "tool_use", "id": next(ids), "name": name, "input": arguments}

    def thinking(thought: str) -> dict[str, str]:
        return {"type": "thinking", "thinking": thought, "signature": "ErUBCkYIBxgCKkB"}

    goal = "Write unit tests for parseDuration in src/time.ts (subtask of the release checklist)."
    task.say("text", goal, images=[])
    task.request([text(f"<task>\n{goal}\n</task>"), roo_env("src/time.ts", model, "$0.00")])
    read = call("read_file", path="src/time.ts")
    task.respond([thinking("I need the function's cases before writing tests."), read], 12100, 90, 12096, 0, 0.0470)
    source = "export function parseDuration(s: string): number {\n  const m = /^(\\d+)(ms|s|m)$/.exec(s)\n" \
             "  if (!m) throw new Error(`bad duration: ${s}`)\n  return Number(m[1]) * { ms: 1, s: 1e3, m: 6e4 }[m[2]]\n}"
    task.request([{"type": "tool_result", "tool_use_id": read["id"], "content": f"File: src/time.ts\n{source}"},
                  roo_env("src/time.ts", model, "$0.05")])
    write = call("write_to_file", path="src/time.test.ts", content="import { parseDuration } from './time'\n...")
    task.respond([thinking("Cover each unit and the error."), text("I'll add the tests."), write],
                 12700, 410, 600, 12096, 0.0160)
    task.request([{"type": "tool_result", "tool_use_id": write["id"],
                   "content": json.dumps({"status": "error", "message": "The tool execution failed",
                                          "error": "src/time.test.ts is write-protected"}, separators=(",", ":"))},
                  roo_env("src/time.ts", model, "$0.07")])
    ask = call("ask_followup_question", question="src/time.test.ts is protected. Where should the tests go?",
               follow_up=[{"text": "tests/time.test.ts"}, {"text": "src/__tests__/time.test.ts"}])
    task.respond([ask], 13200, 120, 520, 12700, 0.0077)
    task.ask("followup", json.dumps({"question": "Where should the tests go?"}))
    task.request([{"type": "tool_result", "tool_use_id": ask["id"],
                   "content": "<answer>\ntests/time.test.ts\n</answer>"},
                  {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                               "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYAAAAAMAASsJTYQAAAAASUVORK5CYII="}},
                  roo_env("src/time.ts", model, "$0.08")])
    write2 = call("write_to_file", path="tests/time.test.ts", content="import { parseDuration } from '../src/time'\n"
                  "test('units', () => { expect(parseDuration('2s')).toBe(2000) })\n")
    task.respond([write2], 13500, 260, 480, 13200, 0.0090)
    task.request([{"type": "tool_result", "tool_use_id": write2["id"],
                   "content": "{\"path\":\"tests/time.test.ts\",\"operation\":\"created\",\"notice\":\"You do not need "
                              "to re-read the file, as you have seen all changes you proposed.\"}"},
                  roo_env("tests/time.test.ts", model, "$0.09")])
    run = call("execute_command", command="npx vitest run tests/time.test.ts")
    task.respond([run], 13900, 70, 330, 13500, 0.0063)
    task.request([{"type": "tool_result", "tool_use_id": run["id"],
                   "content": "Command executed in terminal within working directory '/home/ana/web'. Exit code: 0\n"
                              "Output:\n ✓ tests/time.test.ts (1 test) 2ms"}, roo_env("tests/time.test.ts", model,
                                                                                    "$0.10")])
    done = call("attempt_completion", result="Added tests/time.test.ts; it passes.")
    task.respond([done], 14200, 40, 300, 13900, 0.0058, says=(("completion_result", "Added tests/time.test.ts."),))
    task.ask("completion_result", "")
    # while the completion waits, the user presses "condense": Roo summarizes everything, tags every message and
    # appends the summary (a user message) at the end
    summary = ("## Conversation Summary\n1. Previous Conversation: asked for unit tests of parseDuration; "
               "src/time.test.ts is protected, so the tests went to tests/time.test.ts.\n2. Current Work: one test "
               "passes.\n3. Next Steps: cover ms, m and the error case.")
    condense_id = "c0ffee00-1234-4abc-9def-0123456789ab"
    task.say("condense_context", partial=False, contextCondense={"cost": 0.018, "prevContextTokens": 14500,
                                                                  "newContextTokens": 2900, "summary": summary,
                                                                  "condenseId": condense_id})
    for entry in task.history:
        entry["condenseParent"] = condense_id
    task.history.append({"role": "user", "content": [text(summary)], "ts": task.history[-1]["ts"] + 1,
                         "isSummary": True, "condenseId": condense_id})
    task.say("user_feedback", "Now add the remaining cases.")
    # the completion's tool_result now follows the summary, not its call: Roo stores it as text
    task.request([text("Tool result:\nThe user has provided feedback on the results. Consider their input to continue "
                       "the task, and then attempt completion again.\n<feedback>\nNow add the remaining cases.\n"
                       "</feedback>"), roo_env("tests/time.test.ts", model, "$0.13")])
    edit = call("apply_diff", path="tests/time.test.ts", diff="<<<<<<< SEARCH\n:start_line:2\n-------\n...")
    task.respond([thinking("ms, m, and an invalid string."), edit], 3300, 300, 3290, 0, 0.0170)
    task.request([{"type": "tool_result", "tool_use_id": edit["id"],
                   "content": "{\"path\":\"tests/time.test.ts\",\"operation\":\"modified\"}"},
                  roo_env("tests/time.test.ts", model, "$0.15")])
    done = call("attempt_completion", result="tests/time.test.ts covers s, ms, m and invalid input; all pass.")
    task.respond([done], 3700, 60, 400, 3290, 0.0030)
    item = {"id": "0196f3a2-7b1c-7c3e-b0d4-2c5e8f9a1b3d", "rootTaskId": "0196f3a0-1111-7aaa-8bbb-0c0c0c0c0c0c",
            "parentTaskId": "0196f3a0-1111-7aaa-8bbb-0c0c0c0c0c0c", "number": 2, "ts": task.now,
            "task": goal, "tokensIn": 97000, "tokensOut": 1310, "cacheWrites": 6250, "cacheReads": 67576,
            "totalCost": 0.1177, "size": 18000, "workspace": "/home/ana/web", "mode": "code", "status": "completed"}
    task.write(OUT / "roo-code" / "native-task", **{"history_item.json": item})


if __name__ == "__main__":
    cline_xml_task()
    cline_native_task()
    roo_xml_task()
    roo_native_task()
    print("wrote tests/fixtures/cline/* and tests/fixtures/roo-code/*")
