"""Readers for LangChain, SWE-agent, mini-swe-agent, OpenHands, tau-bench and tau2-bench logs.

Per format: the hand-written fixture's happy path, auto-detection and ``format=`` overrides, the real third-party
logs in ``../shared/real_logs`` (skipped when absent), conversation selection, a replay on every log, broken
structure, and a mutation fuzz where only a typed :class:`LoadError` may escape ``compaction.load``.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REAL_LOGS
from conftest import ROOT
from conftest import real_log
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from reader_checks import assert_pairs
from reader_checks import json_paths
from reader_checks import roles

import compaction
from compaction.conversation import Usage
from compaction.formats import LoadError
from compaction.formats import formats
from compaction.formats import parse_document
from compaction.formats.openhands import MAX_MESSAGE_CHARS
from compaction.formats.openhands import command_output
from compaction.formats.openhands import truncate

FIXTURES = ROOT / "tests" / "fixtures"


def fixture(relative: str) -> Path:
    return FIXTURES / relative


def load_json(relative: str) -> Any:
    return json.loads(fixture(relative).read_text(encoding="utf-8"))


def load_value(value: Any, name: str = "mutated.json", **kwargs: Any) -> compaction.Conversation:
    return compaction.load(json.dumps(value).encode(), name=name, **kwargs)


def assert_calls_paired(conv: compaction.Conversation) -> None:
    """Every tool result answers an earlier call of the same name, and nothing is reported broken."""
    assert_pairs(conv)
    assert not [w for w in conv.warnings if "never answered" in w.message or "no earlier call" in w.message]


# --------------------------------------------------------------------------------------------------- LangChain
def test_langchain_messages_to_dict_fixture() -> None:
    conv = compaction.load(fixture("langchain/messages_to_dict.json"))
    assert conv.format == "langchain" and conv.id == "0" and conv.warnings == ()
    assert roles(conv) == "SUATATTATATATTA"
    assert [len(m.tool_calls) for m in conv.messages if m.role == "assistant"] == [1, 2, 1, 1, 2, 0]
    assert_calls_paired(conv)
    # the Anthropic tool_use block repeats tool_calls[0]: read once; thinking is reasoning; the image is kept
    first = conv.messages[2]
    assert first.texts == ("I'll start with the exporter.",)
    assert first.tool_calls[0].arguments == {"path": "app/export.py"}
    assert first.reasoning[0].startswith("An off-by-one")
    assert len(conv.messages[1].images) == 1 and conv.messages[1].images[0].source == "base64"
    errors = [m.tool_result.error for m in conv.messages if m.tool_result]
    assert errors == [False, False, False, True, False, False, False]
    # usage_metadata counts cache reads and writes inside input_tokens
    assert sorted(conv.usage) == [2, 4, 7, 9, 11, 14]
    assert conv.usage[2] == Usage(input_tokens=20, output_tokens=96, cache_read_tokens=0, cache_write_tokens=1840)
    assert conv.usage[14] == Usage(input_tokens=2, output_tokens=74, cache_read_tokens=3338, cache_write_tokens=310)
    assert conv.messages[2].meta == {"id": "run-4f1c-0", "model_name": "claude-sonnet-4-5-20250929"}


def test_langchain_dumpd_state_fixture() -> None:
    conv = compaction.load(fixture("langchain/langgraph_state_dumpd.json"))
    assert conv.format == "langchain" and roles(conv) == "SUATA"
    # RemoveMessage is a state update: skipped with one warning, nothing else reported
    assert [w.message for w in conv.warnings] == ["message 4: skipped, a 'remove' entry is not a message"]
    chunk = conv.messages[2]  # an AIMessageChunk with v1 standard blocks (reasoning + tool_call)
    assert [c.id for c in chunk.tool_calls] == ["call_Fq2"] and chunk.texts == ()
    assert chunk.reasoning == ("shlex.join exists since 3.8 and quotes each argument.",)
    assert conv.usage[2] == Usage(input_tokens=156, output_tokens=37, cache_read_tokens=256)
    assert_calls_paired(conv)


def test_langchain_legacy_openai_tool_calls_and_token_usage() -> None:
    conv = compaction.load(fixture("langchain/legacy_tool_calls.json"))
    assert roles(conv) == "SUATA" and conv.warnings == ()
    assert conv.messages[2].tool_calls[0].arguments == {"route": "ANA-FRH", "date": "2024-05-18"}
    assert conv.messages[3].tool_result.tool_name == "get_sailings"
    assert conv.usage == {2: Usage(input_tokens=212, output_tokens=27),
                          4: Usage(input_tokens=190, output_tokens=38, cache_read_tokens=128)}


def test_langchain_legacy_function_call_pairs_with_function_message() -> None:
    conv = compaction.load(fixture("langchain/legacy_function_call.json"))
    assert roles(conv) == "UATA" and conv.warnings == ()
    call = conv.messages[1].tool_calls[0]
    assert conv.messages[2].tool_result.origin is call and conv.messages[2].tool_result.text == "398"


def test_langchain_invalid_tool_calls_are_kept_with_raw_arguments() -> None:
    value = [{"type": "human", "data": {"content": "hi", "type": "human"}},
             {"type": "ai", "data": {"content": "", "type": "ai", "tool_calls": [],
                                     "invalid_tool_calls": [{"name": "search", "args": "{\"q\": ", "id": "c1",
                                                             "error": "bad json", "type": "invalid_tool_call"}]}},
             {"type": "tool", "data": {"content": "Error: invalid arguments", "type": "tool", "tool_call_id": "c1",
                                       "status": "error"}}]
    conv = load_value(value)
    assert conv.messages[1].tool_calls[0].arguments == {"_raw": "{\"q\": "}
    assert conv.messages[2].tool_result.error
    assert [w.field for w in conv.warnings] == ["arguments"]


def test_langchain_dumpd_id_path_is_data_not_an_import() -> None:
    message = {"lc": 1, "type": "constructor", "id": ["no_such_package_xyz", "evil", "HumanMessage"],
               "kwargs": {"content": "hello", "type": "human"}}
    conv = load_value([message])
    assert roles(conv) == "U" and "no_such_package_xyz" not in sys.modules
    unknown = {"lc": 1, "type": "constructor", "id": ["subprocess", "Popen"], "kwargs": {"args": ["ls"]}}
    with pytest.raises(LoadError):
        load_value([unknown], format="langchain")


# --------------------------------------------------------------------------------------------------- SWE-agent
def test_swe_agent_function_calling_fixture() -> None:
    conv = compaction.load(fixture("swe-agent/function_calling.traj"))
    assert conv.format == "swe-agent" and conv.id == "main" and conv.warnings == ()
    assert roles(conv) == "SUUATATATATAT"
    assert_calls_paired(conv)
    assert conv.messages[1].meta == {"message_type": "demonstration", "agent": "main", "is_demo": True}
    assert all("message_type" in m.meta for m in conv.messages)
    assert conv.messages[3].reasoning == ("The bug is probably bool() on a non-empty string.",)
    assert conv.messages[2].text.startswith("<uploaded_files>")  # text parts read as text
    assert conv.messages[6].tool_result.text.startswith("True\n(Open file:")


def test_swe_agent_text_actions_become_tool_calls_and_observations_their_results() -> None:
    conv = compaction.load(fixture("swe-agent/text_actions.traj"))
    assert conv.id == "primary" and roles(conv) == "SUUATATAT" and conv.warnings == ()
    assert [c.name for c in conv.messages[3].tool_calls + conv.messages[5].tool_calls + conv.messages[7].tool_calls] == [
        "open", "edit", "submit"]
    assert conv.messages[3].texts == ("DISCUSSION\nFirst I'll look at the parser.",)  # the thought, block removed
    assert dict(conv.messages[3].tool_calls[0].arguments) == {"command": "open tinyconf/parse.py\n"}
    # the recorded action is shortened ("edit 10:10\n..."): the command is the block as the model wrote it
    assert conv.messages[5].tool_calls[0].arguments["command"].endswith("end_of_edit\n")
    assert [m.meta.get("message_type") for m in conv.messages if m.role == "tool"][:2] == ["observation"] * 2
    assert conv.messages[4].tool_result.text.startswith("[File: /testbed/tinyconf/parse.py (24 lines total)]")
    final = conv.messages[8]  # submit: no observation in the history, its output is the submission
    assert final.tool_result.text.startswith("diff --git a/tinyconf/parse.py") and final.meta["final_output"] == (
        "info.submission")
    assert conv.messages[1].meta["is_demo"] is True and conv.messages[1].role == "user"
    assert_calls_paired(conv)


def test_swe_agent_retry_attempts_are_separate_conversations() -> None:
    path = fixture("swe-agent/retry_attempts.traj")
    assert [c.id for c in compaction.load_all_conversations(path)] == ["attempt-0", "attempt-1"]
    chosen = compaction.load(path, conversation="attempt-1")
    assert chosen.messages[3].tool_result.text == "tinyconf/parse.py:10:    return bool(value.strip())"


def test_swe_agent_each_agent_is_its_own_conversation() -> None:
    value = load_json("swe-agent/function_calling.traj")
    value["history"] += [{"role": "system", "content": "You review patches.", "agent": "reviewer"},
                         {"role": "user", "content": "Review this diff.", "agent": "reviewer"},
                         {"role": "assistant", "content": "Looks correct.", "agent": "reviewer"}]
    main, reviewer = compaction.load_all_conversations(json.dumps(value).encode(), name="x.traj")
    assert (main.id, len(main)) == ("main", 13) and (reviewer.id, roles(reviewer)) == ("reviewer", "SUA")


# --------------------------------------------------------------------------------------------------- mini-swe-agent
def test_mini_swe_agent_tool_calls_fixture() -> None:
    conv = compaction.load(fixture("mini-swe-agent/tool_calls.traj.json"))
    assert conv.format == "mini-swe-agent" and conv.id == "textkit__slugify-42" and conv.warnings == ()
    assert roles(conv) == "SUATATAUATATAT"
    assert_calls_paired(conv)
    # the exit message is the outcome of the call that printed the submission marker
    exit_result = conv.messages[-1]
    assert exit_result.tool_result.call_id == "call_6"
    assert exit_result.meta == {"mini_swe_agent_role": "exit", "exit_status": "Submitted"}
    assert exit_result.tool_result.text.startswith("diff --git a/textkit/slug.py")
    assert conv.messages[7].text.startswith("No tool calls found")  # a format error stays a user message
    assert sorted(conv.usage) == [2, 4, 6, 8, 10, 12]
    assert conv.usage[4] == Usage(input_tokens=150, output_tokens=19, cache_read_tokens=1152)
    assert conv.messages[2].meta == {"timestamp": 1760000000.5, "cost": 0.0005336}


def test_mini_swe_agent_text_actions_and_exit_without_open_call() -> None:
    conv = compaction.load(fixture("mini-swe-agent/text_actions.traj.json"))
    assert conv.id == "0" and roles(conv) == "SUATATU" and conv.warnings == ()
    assert [(c.name, c.arguments["command"]) for m in conv.messages for c in m.tool_calls] == [
        ("grep", 'grep -rn "def slugify" --include=*.py .\n'), ("cat", "cat textkit/slug.py\n")]
    assert conv.messages[2].texts == ("THOUGHT: Find the helper first.",)
    assert conv.messages[5].tool_result.text.startswith("<returncode>0</returncode>")
    assert_calls_paired(conv)
    assert conv.messages[-1].text == "Step limit of 2 reached."
    assert conv.messages[-1].meta == {"mini_swe_agent_role": "exit", "exit_status": "LimitsExceeded"}
    assert sorted(conv.usage) == [2, 4]


# --------------------------------------------------------------------------------------------------- OpenHands
def test_openhands_trajectory_fixture() -> None:
    conv = compaction.load(fixture("openhands/trajectory.json"))
    assert conv.format == "openhands" and conv.id == "0" and conv.warnings == ()
    assert roles(conv) == "SUUATATTATATATAUA"
    assert_calls_paired(conv)
    assert [t.name for t in conv.tools] == ["execute_bash", "str_replace_editor", "think", "finish"]
    # two actions of one model response are one assistant message, followed by both results in call order
    merged = conv.messages[5]
    assert [c.id for c in merged.tool_calls] == ["toolu_02", "toolu_03"]
    assert merged.meta["openhands_event_ids"] == (7, 8) and merged.meta["response_id"] == "chatcmpl-1c7f8b52"
    assert [m.tool_result.call_id for m in conv.messages[6:8]] == ["toolu_02", "toolu_03"]
    # observation text as the agent sees it
    failed = conv.messages[11].tool_result
    assert failed.error and failed.text == (
        "usage: weather [-h] city\nweather: error: unrecognized arguments: --json\n"
        "[The command completed with exit code 2.]\n[Current working directory: /workspace/weather]\n"
        "[Python interpreter: /openhands/poetry/openhands-ai-5O4_aCHf-py3.12/bin/python]\n"
        "[Command finished with exit code 2]")
    assert conv.messages[13].tool_result.text.startswith("The file /workspace/weather/cli.py has been edited.")
    # recalled context: rendered once, after the first user message; the repeated micro-agent is not repeated
    recall = conv.messages[2]
    assert recall.meta["rendered"] == "approximate" and recall.text.startswith("\n\n<RUNTIME_INFORMATION>")
    assert "* http://localhost:50271 (port 50271)" in recall.text and recall.text.count("<EXTRA_INFO>") == 1
    # the condenser's summary is a log compaction before the edit
    assert [(e.kind, e.message_index) for e in conv.events] == [("compaction", 12)]
    assert conv.events[0].summary.startswith("USER_CONTEXT: add --json")
    # agent message without tool calls: usage from llm_metrics; finish: the response text
    assert conv.usage[14] == Usage(input_tokens=4, output_tokens=29, cache_read_tokens=7206, cache_write_tokens=190)
    assert conv.usage[3] == Usage(input_tokens=4, output_tokens=94, cache_read_tokens=0, cache_write_tokens=6116)
    assert sorted(conv.usage) == conv.llm_call_indices
    assert conv.messages[16].text == "Done: `weather Oslo --json` now prints the forecast as a JSON object."
    assert conv.messages[16].meta["final_thought"] == "Added a --json flag to the weather CLI."


def test_openhands_evaluation_output_jsonl() -> None:
    path = fixture("openhands/output.jsonl")
    convs = compaction.load_all_conversations(path)
    assert [c.id for c in convs] == ["psf__requests-2317", "pallets__flask-4045"]
    flask = compaction.load(path, conversation="pallets__flask-4045")
    assert roles(flask) == "UATA"
    result = flask.messages[2].tool_result
    assert result.error and result.text.endswith("did not answer.\n[Error occurred in processing last action]")


def test_openhands_events_one_per_line() -> None:
    events = load_json("openhands/trajectory.json")
    data = "\n".join(json.dumps(e) for e in events).encode()
    conv = compaction.load(data, name="events.jsonl")
    reference = compaction.load(fixture("openhands/trajectory.json"))
    assert conv.format == "openhands" and [m.text for m in conv.messages] == [m.text for m in reference.messages]


def _event(i: int, **fields: Any) -> dict[str, Any]:
    return {"id": i, "timestamp": f"2025-01-01T00:00:{i:02d}", **fields}


def _response(rid: str, calls: list[tuple[str, str]]) -> dict[str, Any]:
    tool_calls = [{"id": c, "type": "function",
                   "function": {"name": "execute_bash", "arguments": json.dumps({"command": cmd})}}
                  for c, cmd in calls]
    return {"id": rid, "choices": [{"message": {"role": "assistant", "content": " ", "tool_calls": tool_calls}}]}


def test_openhands_response_is_placed_when_all_its_calls_are_answered() -> None:
    response = _response("r1", [("c1", "ls"), ("c2", "pwd")])
    meta = [{"function_name": "execute_bash", "tool_call_id": c, "model_response": response} for c in ("c1", "c2")]
    events = [
        _event(0, source="user", action="message", args={"content": "look around"}),
        _event(1, source="agent", action="run", args={"command": "ls"}, tool_call_metadata=meta[0]),
        _event(2, source="agent", action="run", args={"command": "pwd"}, tool_call_metadata=meta[1]),
        _event(3, source="agent", observation="run", cause=2, content="/workspace", tool_call_metadata=meta[1],
               extras={"metadata": {"exit_code": 0}}),
        _event(4, source="user", action="message", args={"content": "also check git"}),
        # no tool_call_metadata: matched to its action through ``cause``
        _event(5, source="agent", observation="run", cause=1, content="README.md",
               extras={"metadata": {"exit_code": 0}}),
    ]
    conv = load_value(events)
    assert roles(conv) == "UUATT" and conv.warnings == ()
    assert conv.messages[1].text == "\n\nalso check git"  # consecutive user messages get a blank line
    assert conv.messages[2].texts == ()  # blank response text is not sent
    assert [m.tool_result.text for m in conv.messages[3:]] == [
        "README.md\n[Command finished with exit code 0]", "/workspace\n[Command finished with exit code 0]"]


def test_openhands_run_without_function_calling_warns_once() -> None:
    events = [
        _event(0, source="user", action="message", args={"content": "count the files"}),
        _event(1, source="agent", action="run", args={"command": "ls | wc -l", "thought": "Counting."}),
        _event(2, source="agent", observation="run", cause=1, content="12", extras={"metadata": {"exit_code": 0}}),
        _event(3, source="agent", action="run", args={"command": "ls -a | wc -l", "thought": "With dotfiles."}),
    ]
    conv = load_value(events)
    assert roles(conv) == "UAUA" and conv.messages[1].text == "Counting."
    assert conv.messages[2].text == (
        "\nObserved result of command executed by user:\n12\n[Command finished with exit code 0]")
    assert len(conv.warnings) == 1 and "2 agent action(s) have no tool_call_metadata" in conv.warnings[0].message


def test_openhands_text_rules() -> None:
    long = "x" * (MAX_MESSAGE_CHARS + 10)
    cut = truncate(long)
    assert len(cut) == MAX_MESSAGE_CHARS + len("\n[... Observation truncated due to length ...]\n")
    assert truncate("short") == "short"
    extras = {"metadata": {"exit_code": -1, "prefix": "[Below is the output of the previous command.]\n",
                           "suffix": "\n[The command has no new output after 30 seconds.]"}}
    assert command_output("Serving HTTP", extras) == (
        "[Below is the output of the previous command.]\nServing HTTP\n"
        "[The command has no new output after 30 seconds.]")


# --------------------------------------------------------------------------------------------------- tau-bench
def test_tau_bench_results_fixture() -> None:
    path = fixture("tau-bench/results.json")
    convs = compaction.load_all_conversations(path)
    assert [(c.id, len(c), c.tool_call_count) for c in convs] == [("task0-trial0", 16, 4), ("task7-trial1", 8, 2)]
    for conv in convs:
        assert conv.format == "tau-bench" and conv.warnings == ()
        assert_calls_paired(conv)
    assert roles(convs[1]) == "SUATATAU"
    assert compaction.load(path, conversation="task7-trial1").messages[3].tool_result.text == "Error: order not found"


def test_tau_bench_single_result_object() -> None:
    result = load_json("tau-bench/results.json")[0]
    conv = load_value(result)
    assert conv.format == "tau-bench" and conv.id == "task0-trial0" and len(conv) == 16


def test_tau_bench_repeated_ids_stay_selectable() -> None:
    results = load_json("tau-bench/results.json")
    convs = compaction.load_all_conversations(json.dumps([results[0], results[0]]).encode(), name="r.json")
    assert [c.id for c in convs] == ["task0-trial0", "task0-trial0#2"]


def test_tau2_bench_results_fixture() -> None:
    path = fixture("tau2-bench/results.json")
    convs = compaction.load_all_conversations(path)
    assert [c.id for c in convs] == ["[service_issue]airplane_mode_on[PERSONA:None]/trial-0",
                                     "[service_issue]airplane_mode_on[PERSONA:None]/trial-1",
                                     "[service_issue]airplane_mode_on[PERSONA:Hard]"]
    conv = convs[0]
    assert conv.format == "tau2-bench" and conv.warnings == ()
    assert roles(conv) == "SAUAUATAUTUAUTU"
    assert_calls_paired(conv)
    assert conv.messages[0].meta["reconstructed"] and "<policy>\n# Telecom Agent Policy" in conv.messages[0].text
    assert [t.name for t in conv.tools] == ["get_customer_by_phone", "get_details_by_id"]
    assert conv.tools[0].parameters["required"] == ["phone_number"]
    assert conv.messages[1].meta["generated"] is False  # tau2's fixed greeting
    # the agent's LLM calls carry usage; the user simulator's tool traffic is flagged as hidden from the agent
    assert sorted(conv.usage) == [3, 5, 7, 11] and conv.usage[3] == Usage(input_tokens=2405, output_tokens=17)
    hidden = [i for i, m in enumerate(conv.messages) if m.meta.get("hidden_from_agent")]
    assert hidden == [8, 9, 12, 13]
    assert all(conv.messages[i].meta["requestor"] == "user" for i in hidden)
    assert all(c.extra == {"requestor": "user"} for i in hidden for c in conv.messages[i].tool_calls)
    assert conv.messages[2].meta["user_simulator_usage"] == {"completion_tokens": 14, "prompt_tokens": 1810}
    assert convs[2].messages[13].tool_result.error


# --------------------------------------------------------------------------------------------------- detection
FIXTURE_FORMATS = {
    "langchain/messages_to_dict.json": "langchain",
    "langchain/langgraph_state_dumpd.json": "langchain",
    "langchain/legacy_tool_calls.json": "langchain",
    "langchain/legacy_function_call.json": "langchain",
    "swe-agent/function_calling.traj": "swe-agent",
    "swe-agent/text_actions.traj": "swe-agent",
    "swe-agent/retry_attempts.traj": "swe-agent",
    "mini-swe-agent/tool_calls.traj.json": "mini-swe-agent",
    "mini-swe-agent/text_actions.traj.json": "mini-swe-agent",
    "openhands/trajectory.json": "openhands",
    "openhands/output.jsonl": "openhands",
    "tau-bench/results.json": "tau-bench",
    "tau2-bench/results.json": "tau2-bench",
}
REAL_FORMATS = {
    "swe-agent/SWE-agent__demonstrations__function_calling_replace_from_source__marshmallow-1867.traj": "swe-agent",
    "swe-agent/SWE-agent__test_data__gpt4__pydicom__pydicom-1458.traj": "swe-agent",
    "mini-swe-agent/SWE-agent-mini-swe-agent__pr854__eval-example_trajectories__astropy__astropy-12907.traj.json":
        "mini-swe-agent",
    "openhands/OpenHands__tests-runtime-trajs__basic_gui_mode.json": "openhands",
    "tau-bench/sierra-research-tau-bench__gpt-4o-airline__task2-trial1.json": "tau-bench",
    "tau2-bench/sierra-research-tau2-bench__pr17__telecom_llm_agent_gpt-4o_user_simulator_gpt-4o.json": "tau2-bench",
    "openai-plain/mini-swe-agent__astropy-12907.json": "openai",
    "openai-plain/openhands-completions__django-10097.json": "openai",
    "openai-plain/tau-bench__task2-trial1.json": "openai",
}


@pytest.mark.parametrize(("relative", "expected"), sorted(FIXTURE_FORMATS.items()))
def test_fixture_detection_and_format_override(relative: str, expected: str) -> None:
    path = fixture(relative)
    assert compaction.load(path).format == expected
    assert compaction.load(path, format=expected).format == expected
    for other in ("langchain", "swe-agent", "mini-swe-agent", "openhands", "tau-bench", "tau2-bench"):
        if other != expected:
            with pytest.raises(LoadError, match="does not look like"):
                compaction.load(path, format=other)


@pytest.mark.parametrize(("relative", "expected"), sorted(REAL_FORMATS.items()))
def test_real_log_detection(relative: str, expected: str) -> None:
    assert compaction.load(real_log(relative)).format == expected


def test_plain_openai_list_is_still_openai() -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"},
                {"role": "assistant", "content": None,
                 "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    assert load_value(messages).format == "openai"
    assert load_value({"messages": messages}).format == "openai"


def test_new_formats_are_registered_ahead_of_the_generic_ones() -> None:
    order = list(formats())
    for name in ("langchain", "swe-agent", "mini-swe-agent", "openhands", "tau-bench", "tau2-bench"):
        assert order.index(name) < order.index("haystack") < order.index("openai")


# --------------------------------------------------------------------------------------------------- real logs
def test_real_tau2_bench_results() -> None:
    path = real_log(next(k for k, v in REAL_FORMATS.items() if v == "tau2-bench"))
    convs = compaction.load_all_conversations(path)
    assert len(convs) == 20 and len({c.id for c in convs}) == 20
    assert sum(c.tool_call_count for c in convs) == 215
    by_requestor = {"assistant": 0, "user": 0}
    for conv in convs:
        assert conv.warnings == ()
        assert_calls_paired(conv)
        for m in conv.messages:
            if m.tool_calls:
                by_requestor["user" if m.meta.get("hidden_from_agent") else "assistant"] += len(m.tool_calls)
        assert len(conv.usage) == len(conv.llm_call_indices)  # the fixed greeting is no LLM call
    assert by_requestor == {"assistant": 90, "user": 125}
    chosen = compaction.load(path, conversation=convs[7].id)
    assert chosen.id == convs[7].id and len(chosen) == len(convs[7])
    with pytest.raises(LoadError, match="no conversation 'nope'"):
        compaction.load(path, conversation="nope")


def test_real_tau_bench_trajectory() -> None:
    conv = compaction.load(real_log(next(k for k, v in REAL_FORMATS.items() if v == "tau-bench")))
    assert (conv.id, len(conv), conv.tool_call_count, len(conv.llm_call_indices)) == ("task2-trial1", 62, 27, 30)
    assert conv.warnings == ()
    assert_calls_paired(conv)


def test_real_mini_swe_agent_trajectory() -> None:
    conv = compaction.load(real_log(next(k for k, v in REAL_FORMATS.items() if v == "mini-swe-agent")))
    assert (conv.id, len(conv), conv.tool_call_count, conv.tool_result_count) == ("astropy__astropy-12907", 130, 64, 64)
    assert conv.warnings == () and len(conv.usage) == 64
    assert_calls_paired(conv)
    assert conv.messages[-1].meta["mini_swe_agent_role"] == "exit"


def test_real_swe_agent_trajectories() -> None:
    marshmallow = compaction.load(real_log(
        "swe-agent/SWE-agent__demonstrations__function_calling_replace_from_source__marshmallow-1867.traj"))
    assert (len(marshmallow), marshmallow.tool_call_count, len(marshmallow.llm_call_indices)) == (28, 13, 13)
    assert marshmallow.warnings == ()
    assert_calls_paired(marshmallow)  # SWE-agent's demo reuses call ids; pairing follows the order
    pydicom = compaction.load(real_log("swe-agent/SWE-agent__test_data__gpt4__pydicom__pydicom-1458.traj"))
    # text actions: 12 actions (the final submit included) as tool calls, each observation its result
    assert (pydicom.id, len(pydicom), pydicom.tool_call_count, len(pydicom.llm_call_indices)) == ("primary", 27, 12, 12)
    assert pydicom.tool_result_count == 12 and pydicom.messages[-1].tool_result.tool_name == "submit"
    assert pydicom.messages[-1].meta["final_output"] == "trajectory"
    assert [c.name for m in pydicom.messages for c in m.tool_calls][:4] == ["create", "edit", "python", "find_file"]
    assert_calls_paired(pydicom)
    assert pydicom.messages[1].meta.get("is_demo") is True and pydicom.warnings == ()


def test_real_openhands_event_stream() -> None:
    path = real_log(next(k for k, v in REAL_FORMATS.items() if v == "openhands"))
    assert len(json.loads(path.read_text())) == 18
    conv = compaction.load(path)
    assert roles(conv) == "UATATATATA" and conv.warnings == ()
    assert (conv.tool_call_count, sorted(conv.usage)) == (4, [1, 3, 5, 7])
    assert_calls_paired(conv)


# --------------------------------------------------------------------------------------------------- replay
def _all_logs() -> list[Path]:
    paths = [fixture(p) for p in FIXTURE_FORMATS]
    if REAL_LOGS.exists():
        paths += [REAL_LOGS / p for p in REAL_FORMATS if REAL_FORMATS[p] != "openai"]
    return paths


@pytest.mark.parametrize("path", _all_logs(), ids=lambda p: p.name[:60])
def test_every_conversation_replays(path: Path) -> None:
    for conv in compaction.load_all_conversations(path):
        rep = compaction.replay(conv, "haystack.tool_result_pruning", context_window=1500)
        steps = rep.to_json()["steps"]
        assert [s["message_index"] for s in steps] == conv.llm_call_indices
        assert all(s["tokens_sent"] <= s["tokens_uncompacted"] for s in steps)


def test_replay_compacts_a_long_real_run() -> None:
    conv = compaction.load(real_log(next(k for k, v in REAL_FORMATS.items() if v == "mini-swe-agent")))
    summary = compaction.replay(conv, "haystack.tool_result_pruning", context_window=8000).to_json()["summary"]
    assert summary["compactions"] > 0 and summary["total_tokens_sent"] < summary["total_tokens_uncompacted"]


# --------------------------------------------------------------------------------------------------- bad input
def _retarget(records: list, match: Callable[[Any], bool], set_id: Callable[[Any], None]) -> None:
    """Point the first record that ``match`` at a tool call id no message made."""
    for record in records:
        if match(record):
            set_id(record)
            return
    raise AssertionError("no record to break")


def _break_langchain(v: Any) -> None:
    _retarget(v, lambda r: r["type"] == "tool", lambda r: r["data"].update(tool_call_id="toolu_gone"))


def _break_swe_agent(v: Any) -> None:
    _retarget(v["history"], lambda r: r["role"] == "tool", lambda r: r.update(tool_call_ids=["toolu_gone"]))


def _break_mini(v: Any) -> None:
    _retarget(v["messages"], lambda r: r["role"] == "tool", lambda r: r.update(tool_call_id="call_gone"))


def _break_openhands(v: Any) -> None:
    _retarget(v, lambda r: r.get("observation") == "read",
              lambda r: r.update(tool_call_metadata={**r["tool_call_metadata"], "tool_call_id": "toolu_gone"}))


def _break_tau(v: Any) -> None:
    _retarget(v[0]["traj"], lambda r: r["role"] == "tool", lambda r: r.update(tool_call_id="call_gone"))


def _break_tau2(v: Any) -> None:
    _retarget(v["simulations"][0]["messages"], lambda r: r["role"] == "tool", lambda r: r.update(id="call_gone"))


BREAKERS = {
    "langchain/messages_to_dict.json": _break_langchain,
    "swe-agent/function_calling.traj": _break_swe_agent,
    "mini-swe-agent/tool_calls.traj.json": _break_mini,
    "openhands/trajectory.json": _break_openhands,
    "tau-bench/results.json": _break_tau,
    "tau2-bench/results.json": _break_tau2,
}


@pytest.mark.parametrize("relative", sorted(BREAKERS))
def test_orphan_result_and_unanswered_call_cost_one_warning_each(relative: str) -> None:
    value = load_json(relative)
    BREAKERS[relative](value)
    conv = load_value(value, name=Path(relative).name, format=FIXTURE_FORMATS[relative])
    texts = [w.message for w in conv.warnings]
    assert len(texts) == 2, texts
    assert sum(t.endswith("is never answered") for t in texts) == 1
    assert sum("_gone' has no earlier call" in t for t in texts) == 1
    assert len(conv) == len(compaction.load(fixture(relative)))


#: for each format, where one record sits and how to reach the record list
RECORD_LISTS: dict[str, Callable[[Any], list]] = {
    "langchain/messages_to_dict.json": lambda v: v,
    "swe-agent/function_calling.traj": lambda v: v["history"],
    "mini-swe-agent/tool_calls.traj.json": lambda v: v["messages"],
    "openhands/trajectory.json": lambda v: v,
    "tau-bench/results.json": lambda v: v[0]["traj"],
    "tau2-bench/results.json": lambda v: v["simulations"][0]["messages"],
}


@pytest.mark.parametrize("relative", sorted(RECORD_LISTS))
def test_a_malformed_message_costs_only_itself(relative: str) -> None:
    value = load_json(relative)
    records = RECORD_LISTS[relative](value)
    index = next(i for i, r in enumerate(records) if isinstance(r, dict) and (
        r.get("role") == "user" or r.get("type") == "human" or r.get("action") == "message"))
    records[index] = 42
    original = compaction.load(fixture(relative))
    conv = load_value(value, name=Path(relative).name)
    assert conv.format == original.format and len(conv) == len(original) - 1
    assert len(conv.warnings) == 1 and "expected an object" in conv.warnings[0].message


def test_wrong_document_shapes_raise_clear_load_errors() -> None:
    with pytest.raises(LoadError, match="expected a list, or an object with 'messages'|unknown log format"):
        load_value({"simulations": "none"})
    with pytest.raises(LoadError, match="does not look like tau2-bench results: no object with a 'simulations' list"):
        load_value([1, 2], format="tau2-bench")


# --------------------------------------------------------------------------------------------------- fuzz
_JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**12), st.floats(allow_nan=False),
                         st.text(max_size=12), st.just({}), st.just([]), st.just({"type": "text"}))


def _apply(value: Any, path: tuple, op: str, leaf: Any) -> Any:
    if not path:
        return leaf if op == "replace" else value
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if op == "delete":
        del parent[key]
    else:
        parent[key] = leaf
    return value


def _mutants(relative: str) -> st.SearchStrategy[bytes]:
    text = fixture(relative).read_text(encoding="utf-8")
    jsonl = relative.endswith(".jsonl")
    base = [json.loads(line) for line in text.splitlines()] if jsonl else json.loads(text)
    paths = json_paths(base)

    @st.composite
    def mutate(draw: st.DrawFn) -> bytes:
        value = copy.deepcopy(base)
        for _ in range(draw(st.integers(1, 4))):
            live = [p for p in paths if _reachable(value, p)]
            path = live[draw(st.integers(0, len(live) - 1))]
            value = _apply(value, path, draw(st.sampled_from(["replace", "delete"])), draw(_JSON_LEAVES))
        data = ("\n".join(json.dumps(v) for v in value) if jsonl and isinstance(value, list) else json.dumps(value))
        raw = data.encode()
        if draw(st.booleans()):
            raw = raw[: draw(st.integers(0, len(raw)))]  # truncated file
        return raw

    return mutate()


def _reachable(value: Any, path: tuple) -> bool:
    for key in path:
        in_dict = isinstance(value, dict) and key in value
        if in_dict or isinstance(value, list) and isinstance(key, int) and key < len(value):
            value = value[key]
        else:
            return False
    return True


@pytest.mark.parametrize("relative", sorted(BREAKERS) + ["openhands/output.jsonl", "swe-agent/retry_attempts.traj"])
def test_fuzzed_logs_raise_only_typed_load_errors(relative: str) -> None:
    fmt = FIXTURE_FORMATS[relative]

    @settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(_mutants(relative))
    def check(data: bytes) -> None:
        for forced in (None, fmt):
            try:
                convs = compaction.load_all_conversations(data, format=forced, name="fuzzed")
            except LoadError as exc:
                assert not exc.internal, exc
                continue
            for conv in convs:
                assert all(m.role in ("system", "user", "assistant", "tool") for m in conv.messages)
        info = formats()[fmt]
        try:
            doc = parse_document(data, "fuzzed")
        except LoadError:
            return
        info.detect(doc)  # a detector never raises

    check()
