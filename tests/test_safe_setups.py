"""Issue 13, safe to share — what a link, an imported file or a command line may ask for: bounded decoding, every
value validated (types, finite numbers, the registry's ranges), one message per bad setup, capped compositions and
triggers, and a work budget for replays."""

from __future__ import annotations

import base64
import io
import json
import math
import time
import zlib

import pytest
from conftest import SAMPLES

import compaction
from compaction.budget import ReplayBudgetExceeded
from compaction.budget import WorkBudget
from compaction.cli import main
from compaction.policy import MAX_TRIGGER_DEPTH
from compaction.policy import parse_trigger
from compaction.policy import validate_threshold
from compaction.setups import MAX_LINK_CHARS
from compaction.setups import MAX_LINK_JSON_BYTES
from compaction.setups import MAX_SETUPS
from compaction.setups import Setup
from compaction.setups import decode_from_url
from compaction.setups import encode_for_url
from compaction.setups import read_setups_json
from compaction.setups import read_setups_link
from compaction.setups import setups_from_json
from compaction.strategies import get_strategy
from compaction.strategies._nesting import MAX_CHILDREN
from compaction.strategies._nesting import MAX_DEPTH

PRUNE = "haystack.tool_result_pruning"
PIPELINE = "agent_framework.pipeline"
SAMPLE = SAMPLES / "support_agent.openai.json"


def token_of(value) -> str:
    """A link token of any JSON value (or raw bytes), the way :func:`encode_for_url` packs setups."""
    raw = value if isinstance(value, bytes) else json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def nested_pipeline(depth: int) -> str:
    return f"{PIPELINE}(children=" * depth + "truncation" + ")" * depth


@pytest.fixture(scope="module")
def sample() -> compaction.Conversation:
    return compaction.load(SAMPLE)


# ------------------------------------------------------------------------------------------------ Param.coerce
@pytest.mark.parametrize("value, fragment", [
    (-5, "expected a value from 1 to 50, got -5"),
    (10**300, "expected a value from 1 to 50, got 1,000,000"),
    ("1e3", "expected a value from 1 to 50, got 1,000"),
    (float("inf"), "expected a finite whole number, got inf"),
    ("Infinity", "expected a finite whole number, got 'Infinity'"),
    (float("nan"), "expected a finite whole number, got nan"),
    (True, "expected a finite whole number, got True"),
    ("9" * 5000, "expected a finite whole number"),
], ids=["negative", "10**300", "1e3", "inf", "Infinity", "nan", "True", "5,000 digits"])
def test_coerce_enforces_the_range_and_refuses_non_finite_numbers(value, fragment):
    param = next(p for p in get_strategy(PRUNE).params if p.name == "min_keep_steps")
    with pytest.raises(ValueError, match="parameter 'min_keep_steps'") as info:
        param.coerce(value)
    assert fragment in str(info.value) and len(str(info.value)) < 200


def test_coerce_keeps_good_values_and_clamp_moves_finite_ones_to_the_bound():
    info = get_strategy(PRUNE)
    steps = next(p for p in info.params if p.name == "min_keep_steps")
    assert steps.coerce("12") == 12 and steps.coerce(12.0) == 12 and steps.coerce(" 1_0 ") == 10
    assert steps.clamp(-5) == (1, "parameter 'min_keep_steps': -5 is outside its range; using its minimum 1")
    assert steps.clamp(10**300)[0] == 50 and steps.clamp(7) == (7, None)
    with pytest.raises(ValueError, match="finite"):
        steps.clamp(float("inf"))
    notices: list[str] = []
    assert info.resolve_params({"min_keep_steps": 99}, notices)["min_keep_steps"] == 50 and len(notices) == 1
    with pytest.raises(ValueError, match="from 1 to 50"):
        info.resolve_params({"min_keep_steps": 99})


def test_every_numeric_parameter_has_a_range_its_default_lies_in():
    for name, info in compaction.strategies().items():
        for p in info.params:
            if p.type in ("int", "float"):
                assert p.minimum is not None and p.maximum is not None, (name, p.name)
                assert p.coerce(p.default) == p.default, (name, p.name)


@pytest.mark.parametrize("args, fragment", [
    (["--set", "min_keep_steps=1000"], "parameter 'min_keep_steps': expected a value from 1 to 50, got 1,000"),
    (["--set", "min_tokens=inf"], "parameter 'min_tokens': expected a finite whole number, got 'inf'"),
    (["--compact-at", "nan"], "`compact_at` must be a finite number, got nan"),
    (["--context-window", "0"], "`context_window` must be a positive number of tokens"),
])
def test_the_cli_refuses_out_of_range_and_non_finite_values_in_one_line(capsys, args, fragment):
    code = main(["replay", str(SAMPLE), "--strategy", PRUNE, *args], out=io.StringIO())
    err = capsys.readouterr().err
    assert code == 2 and fragment in err and err.count("\n") == 1


@pytest.mark.parametrize("window, at, to", [(math.inf, 0.7, 0.4), (math.nan, 0.7, 0.4), (1000, math.inf, 0.4),
                                            (1000, 0.7, math.nan), (True, 0.7, 0.4), ("1000", 0.7, 0.4)])
def test_the_threshold_policy_refuses_anything_but_finite_numbers(window, at, to):
    with pytest.raises(ValueError, match="must be a finite number"):
        validate_threshold(window, at, to)


def test_the_api_refuses_an_infinite_window(sample):
    with pytest.raises(ValueError, match="finite"):
        compaction.replay(sample, PRUNE, context_window=math.inf)


# ------------------------------------------------------------------------------------------------ compositions
def test_compositions_nest_at_most_max_depth_levels_and_say_so(sample):
    compaction.replay(sample, PIPELINE, {"children": nested_pipeline(MAX_DEPTH - 2)})  # three levels: fine
    started = time.process_time()
    with pytest.raises(ValueError, match=f"strategies nest at most {MAX_DEPTH} levels deep") as info:
        compaction.replay(sample, PIPELINE, {"children": nested_pipeline(150)})  # the 90-second link
    assert time.process_time() - started < 2
    assert "this child would be level 4" in str(info.value)


def test_nested_summarizers_do_not_grow_a_graph_of_summaries_call_after_call():
    """Two nested summarizers used to cover copies of each other's summaries: a graph whose paths the timeline counts
    doubled every few calls (this replay did not finish in minutes)."""
    conv = compaction.load(SAMPLES / "coding_agent.openai.json")
    children = "; ".join(f"agent_framework_python.summarization(target_count={4 + k})" for k in range(MAX_CHILDREN))
    started = time.process_time()
    rep = compaction.replay(conv, PIPELINE, {"children": children}, context_window=8_000)
    assert time.process_time() - started < 5 and rep.summary()["compactions"] > 10
    last = rep.context_at(len(rep.steps) - 1)
    summaries = [item for item in last if item.fate == "inserted"]
    assert summaries and all(item.represents for item in summaries)


@pytest.mark.parametrize("host, extra", [(PIPELINE, {}), ("agent_framework_python.token_budget_composed",
                                                          {"token_budget": 5_000})])
def test_a_composite_holds_at_most_max_children(sample, host, extra):
    compaction.replay(sample, host, {**extra, "children": "; ".join(["truncation"] * MAX_CHILDREN)})
    with pytest.raises(ValueError, match=f"{MAX_CHILDREN + 1} child strategies; a composite holds at most "
                                         f"{MAX_CHILDREN}"):
        compaction.replay(sample, host, {**extra, "children": "; ".join(["truncation"] * (MAX_CHILDREN + 1))})


def test_triggers_nest_at_most_max_trigger_depth_levels():
    deep = "All(" * MAX_TRIGGER_DEPTH + "Always()" + ")" * MAX_TRIGGER_DEPTH
    with pytest.raises(ValueError, match=f"nest at most {MAX_TRIGGER_DEPTH} levels deep"):
        parse_trigger(deep)
    with pytest.raises(ValueError, match="nest at most"):
        parse_trigger("All(" * 100_000 + "Always()" + ")" * 100_000)  # was a RecursionError
    wide = "Any(" + ", ".join(["Always()"] * 20_000) + ")"
    started = time.process_time()
    assert len(parse_trigger(wide).children) == 20_000
    assert time.process_time() - started < 2  # linear: no copy of the rest of the text per child


# ------------------------------------------------------------------------------------------------ work budget
def test_a_replay_stops_cleanly_when_its_budget_is_spent(sample):
    full = compaction.replay(sample, PRUNE, context_window=20_000, budget=WorkBudget(60))
    assert len(full.steps) == len(sample.llm_call_indices)
    with pytest.raises(ReplayBudgetExceeded) as info:
        compaction.replay(sample, PRUNE, context_window=20_000, budget=WorkBudget(0))
    assert isinstance(info.value, ValueError) and info.value.step == 0 and info.value.alone
    assert str(info.value).startswith(f"stopped at LLM call 0 of {len(full.steps)} after ")
    assert "it used its budget of 0 CPU-seconds" in str(info.value)


def test_a_budget_shared_with_a_page_says_the_page_spent_it(sample):
    page = WorkBudget(0.05)
    while page.remaining() > 0.01:
        pass  # spend most of the page's budget
    with pytest.raises(ReplayBudgetExceeded) as info:
        for _ in range(50):
            compaction.replay(sample, PRUNE, context_window=20_000, budget=page.share(0.05))
    assert not info.value.alone and "used up by the replays before it" in str(info.value)


def test_the_budget_stops_the_costliest_composition_soon_after_it_is_spent():
    conv = compaction.load(SAMPLES / "coding_agent.openai.json")
    leaf = "haystack.summarization"
    heavy = "; ".join([f"{PIPELINE}(children={'; '.join([leaf] * MAX_CHILDREN)})"] * MAX_CHILDREN)  # 64 leaves
    started = time.thread_time()
    with pytest.raises(ReplayBudgetExceeded):  # in full it takes about ten times the budget
        compaction.replay(conv, PIPELINE, {"children": heavy}, context_window=5_000, budget=WorkBudget(0.05))
    assert time.thread_time() - started < 0.05 + 0.5  # checked inside each call too, at every nested child's run


# ------------------------------------------------------------------------------------------------ links
def test_old_links_keep_working():
    setups = [Setup(PRUNE, {"min_keep_steps": 3}, context_window=100_000, compact_at=0.75, compact_to=0.35,
                    counter="tiktoken:o200k_base", label="A"),
              Setup("agent_framework.tool_result_compaction", {"trigger": "All(TokensExceed(5000), HasToolCalls())"},
                    label="B")]
    old_style = token_of([s.to_json() for s in setups])  # the format links have always had
    assert decode_from_url(old_style) == setups == read_setups_link(old_style).setups
    assert decode_from_url(encode_for_url(setups)) == setups


def test_one_bad_setup_in_a_link_costs_only_itself():
    token = token_of([
        {"strategy": PRUNE, "context_window": math.inf, "label": "infinite window"},
        {"strategy": PRUNE, "params": {"min_keep_steps": math.inf}},
        {"strategy": "no.such"},
        {"strategy": PRUNE, "counter": "approx:NaN"},
        {"strategy": PRUNE, "compact_at": "0.7"},
        {"strategy": PRUNE, "label": "fine"},
    ])
    read = read_setups_link(token)
    assert [s.label for s in read.setups] == ["fine"]
    assert [p.split(":")[0] for p in read.problems] == ["setup 1", "setup 2", "setup 3", "setup 4", "setup 5"]
    assert "'context_window' must be a finite whole number, got inf" in read.problems[0]
    assert "parameter 'min_keep_steps': expected a finite whole number, got inf" in read.problems[1]
    with pytest.raises(ValueError, match="setup 1: field 'context_window'"):
        decode_from_url(token)  # strict: the first problem


def test_out_of_range_link_values_are_moved_into_range_with_a_notice():
    read = read_setups_link(token_of([{"strategy": PRUNE, "params": {"min_keep_steps": -5}},
                                      {"strategy": PRUNE, "params": {"min_keep_steps": 10**300}}]))
    assert [s.params["min_keep_steps"] for s in read.setups] == [1, 50] and not read.problems
    assert read.clamped[0] == "setup 1: parameter 'min_keep_steps': -5 is outside its range; using its minimum 1"
    assert read.clamped[1].startswith("setup 2: parameter 'min_keep_steps': 1,000,000")
    assert read.clamped[1].endswith("is outside its range; using its maximum 50")


def test_a_link_brings_at_most_max_setups_and_says_how_many_were_dropped():
    token = token_of([{"strategy": PRUNE}] * 1000)
    assert len(token) < 400  # 1,000 setups in a short link
    started = time.process_time()
    read = read_setups_link(token)
    assert time.process_time() - started < 1
    assert len(read.setups) == MAX_SETUPS
    assert read.problems == [f"the link holds 1,000 setups: the first {MAX_SETUPS} were read and {1000 - MAX_SETUPS} "
                             f"dropped (at most {MAX_SETUPS} at once)"]
    with pytest.raises(ValueError, match=f"1,000 setups; at most {MAX_SETUPS}"):
        decode_from_url(token)


HOSTILE_LINKS = {
    "deep brackets": (token_of(b"[" * 100_000), "JSON nested too deeply"),
    "inflation bomb": (token_of(b" " * (16 << 20)), f"inflates past {MAX_LINK_JSON_BYTES:,} bytes"),  # 16 MB, 22 KB
    "too long": ("A" * (MAX_LINK_CHARS + 1), f"at most {MAX_LINK_CHARS:,} are read"),
    "cut short": (token_of(b"[1, 2")[:-6], "damaged"),
    "not a token": ("not-a-real-token", "could not be read"),
    "not a list": (token_of({"strategy": PRUNE}), "expected a list"),
    "empty list": (token_of([]), "at least one setup"),
}


@pytest.mark.parametrize("token, fragment", HOSTILE_LINKS.values(), ids=HOSTILE_LINKS.keys())
def test_a_damaged_or_hostile_link_is_one_clear_error(token, fragment):
    assert len(token) <= MAX_LINK_CHARS + 1
    started = time.process_time()
    with pytest.raises(ValueError, match="the link") as info:
        read_setups_link(token)
    assert fragment in str(info.value) and time.process_time() - started < 1


# ------------------------------------------------------------------------------------------------ imports
def test_an_import_is_read_like_a_link():
    text = json.dumps({"setups": [{"strategy": PRUNE, "params": {"min_keep_steps": -5}, "label": "moved"},
                                  {"strategy": PRUNE, "context_window": math.inf}]})
    assert "Infinity" in text  # what Python's json writes (and reads back) for an infinite number
    read = read_setups_json(text)
    assert [s.label for s in read.setups] == ["moved"] and read.setups[0].params["min_keep_steps"] == 1
    assert read.problems == ["setup 2: field 'context_window' must be a finite whole number, got inf"]
    assert len(read.clamped) == 1
    with pytest.raises(ValueError, match="setup 1: parameter 'min_keep_steps'"):
        setups_from_json(text)


@pytest.mark.parametrize("text, fragment", [
    ('{"setups": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ("x" * (2 << 20), "a file of setups is at most"),
    ('{"setups": [{"strategy": "' + PRUNE + '", "context_window": ' + "9" * 5000 + "}]}", "could not be read"),
], ids=["deep brackets", "too large", "a 5,000-digit number"])
def test_a_hostile_import_is_one_clear_error(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        read_setups_json(text)


@pytest.mark.parametrize("counter, ok", [("approx", True), ("approx:3.3", True), ("tiktoken:cl100k_base", True),
                                         ("maf-python", True), ("approx:0", False), ("approx:inf", False),
                                         ("tiktoken:https://x", False), ("maf-dotnet:2", False), ("gpt", False)])
def test_a_setup_counter_must_be_one_the_library_builds(counter, ok):
    data = {"strategy": PRUNE, "counter": counter}
    if ok:
        assert Setup.from_json(data).counter == counter
    else:
        with pytest.raises(ValueError, match="counter"):
            Setup.from_json(data)
