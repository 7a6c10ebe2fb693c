"""The bundled samples: every one loads, and the copies in other formats are what build_samples.py derives."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import SAMPLES

import compaction

_spec = importlib.util.spec_from_file_location("build_samples", SAMPLES / "build_samples.py")
build_samples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_samples)


@pytest.mark.parametrize("source", sorted(SAMPLES.glob("*.openai.json")), ids=lambda p: p.name)
def test_derived_copies_are_up_to_date(source) -> None:
    for fmt, suffix in build_samples.OTHER_FORMATS.items():
        target = source.with_name(source.name.replace(".openai.json", suffix))
        assert target.read_text(encoding="utf-8") == build_samples.derived(source, fmt), (
            f"{target.name} is stale: run python sample_conversations/build_samples.py")


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_every_sample_is_a_long_run_with_tool_output(path) -> None:
    conv = compaction.load(path)
    assert len(conv.llm_call_indices) >= 30 and conv.tool_result_count >= 10
