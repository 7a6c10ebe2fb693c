"""The summaries a replay asks the extractive summarizer for, recorded (the differential tests hand them to the real
library's stubbed summarizer model, so both sides summarize alike)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from compaction import summarizers


@contextmanager
def recorded_summaries() -> Iterator[list[tuple[str, str]]]:
    """Within the block, every summary the extractive summarizer writes is appended to the list it yields as
    (request transcript, summary text)."""
    calls: list[tuple[str, str]] = []
    original = summarizers.ExtractiveSummarizer.text

    def recording(self, request):
        out = original(self, request)
        calls.append((request.transcript, out))
        return out

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(summarizers.ExtractiveSummarizer, "text", recording)
        yield calls
