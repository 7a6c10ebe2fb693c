"""Calibration: how well do simulated numbers match what the provider reported for the real run?

Where a log records provider usage per call (Claude Code, Codex), the uncompacted baseline of our replay is the real
run (unless the real agent compacted — calls after its own compaction are left out). We compare, call by call, the
prompt size our counter estimates with the reported one (uncached input + cache read + cache write), and the cache
read/write split our cost model predicts with the reported split. The fitted chars-per-token is the ratio that makes
our ``approx`` counter agree best with the reported prompt sizes (least squares through the origin on the rendered
characters; the reported size includes what the log does not show, such as the provider's own system prompt and tool
definitions, which the fit absorbs as a constant overhead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

from ..conversation import Conversation
from ..tokens import make_counter
from ..tokens import render_haystack
from .costs import CallInput
from .costs import PriceModel
from .costs import price_calls
from .costs import prices_for

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Calibration:
    """Per-call comparison and summary agreement."""

    rows: list[dict[str, Any]]
    chars_per_token: float | None
    overhead_tokens: float | None
    prompt_mape: float | None  # mean absolute percentage error of the prompt size with the fitted counter
    cache_read_agreement: float | None  # simulated / reported cache reads (fitted counter + hidden prefix)

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.rows)

    def counter_spec(self) -> str:
        """The ``approx`` counter with the fitted chars-per-token (``approx:3.271``): the counter whose counts agree
        best with what the provider reported for this log. It cannot add the constant overhead the fit also found
        (what the log does not show, such as the provider's system prompt). ``ValueError`` when nothing was fitted."""
        if self.chars_per_token is None:
            raise ValueError("no chars-per-token was fitted: no call before the log's first compaction reports a "
                             "prompt size to fit against")
        return approx_spec(self.chars_per_token)

    def summary(self) -> dict[str, Any]:
        return {
            "calls_compared": len(self.rows),
            "fitted_chars_per_token": self.chars_per_token,
            "fitted_counter": None if self.chars_per_token is None else approx_spec(self.chars_per_token),
            "overhead_tokens": self.overhead_tokens,
            "prompt_mape": self.prompt_mape,
            "cache_read_agreement": self.cache_read_agreement,
        }


def calibrate(conv: Conversation, counter: str = "approx", prices: PriceModel | None = None) -> Calibration:
    """Compare the baseline replay of ``conv`` with its reported usage. Without usage, ``rows`` is empty."""
    prices = prices or default_prices(conv)
    count = make_counter(counter)
    first_log_compaction = min((e.message_index for e in conv.events), default=len(conv.messages))
    calls = [i for i in conv.llm_call_indices if i in conv.usage and i < first_log_compaction]
    if not calls:
        return Calibration([], None, None, None, None)
    skipped = conv.log_summary_indices
    messages = conv.messages
    contexts = [[m for j, m in enumerate(messages[:i]) if j not in skipped] for i in calls]
    simulated = price_calls((CallInput(k, ctx, 0) for k, ctx in enumerate(contexts)), count, prices, conv.tools)
    # rendered characters of each context (for the chars-per-token fit), computed incrementally
    chars = []
    total, last = 0, 0
    rendered = [len(render_haystack(m)) if j not in skipped else 0 for j, m in enumerate(messages)]
    kept = [0 if j in skipped else 1 for j in range(len(messages))]
    n_kept = 0
    for i in calls:
        for j in range(last, i):
            total += rendered[j]
            n_kept += kept[j]
        last = i
        chars.append(total + max(n_kept - 1, 0))
    rows = []
    for k, i in enumerate(calls):
        usage = conv.usage[i]
        sim = simulated.calls[k]
        rows.append({
            "message_index": i,
            "reported_prompt": usage.prompt_tokens,
            "estimated_prompt": sim.input_tokens,
            "reported_cache_read": usage.cache_read_tokens,
            "simulated_cache_read": sim.cache_read,
            "reported_cache_write": usage.cache_write_tokens,
            "simulated_cache_write": sim.cache_write,
            "chars": chars[k],
        })
    cpt, overhead = _fit(chars, [r["reported_prompt"] for r in rows])
    if cpt:
        assert overhead is not None  # _fit gives both or neither
        fitted = price_calls((CallInput(k, ctx, 0) for k, ctx in enumerate(contexts)), make_counter(approx_spec(cpt)),
                             prices, conv.tools, hidden_prefix_tokens=max(int(overhead), 0))
        for row, sim in zip(rows, fitted.calls):
            row["fitted_prompt"] = sim.input_tokens
            row["fitted_cache_read"] = sim.cache_read
            row["fitted_cache_write"] = sim.cache_write
    mape = None
    if cpt:
        assert overhead is not None  # _fit gives both or neither
        errors = [abs(c / cpt + overhead - r["reported_prompt"]) / r["reported_prompt"]
                  for c, r in zip(chars, rows) if r["reported_prompt"]]
        mape = sum(errors) / len(errors) if errors else None
    reported_reads = sum(r["reported_cache_read"] for r in rows)
    key = "fitted_cache_read" if cpt else "simulated_cache_read"
    agreement = (sum(r[key] for r in rows) / reported_reads) if reported_reads else None
    return Calibration(rows, cpt, overhead, mape, agreement)


def default_prices(conv: Conversation) -> PriceModel:
    """The price preset of the model the log names (else its provider's default; see
    :func:`compaction.models.resolve_price_model`)."""
    return prices_for(conv)


def approx_spec(chars_per_token: float) -> str:
    """The ``approx`` counter spec of a chars-per-token ratio, to four significant digits."""
    return f"approx:{chars_per_token:.4g}"


def _fit(chars: list[int], reported: list[int]) -> tuple[float | None, float | None]:
    """Least squares ``reported ≈ chars / cpt + overhead``; returns (cpt, overhead)."""
    pairs = [(c, r) for c, r in zip(chars, reported) if r > 0]
    if len(pairs) < 2:
        if pairs and pairs[0][0] > 0:
            return pairs[0][0] / pairs[0][1], 0.0
        return None, None
    n = len(pairs)
    mean_c = sum(c for c, _ in pairs) / n
    mean_r = sum(r for _, r in pairs) / n
    var = sum((c - mean_c) ** 2 for c, _ in pairs)
    if var == 0:
        return None, None
    slope = sum((c - mean_c) * (r - mean_r) for c, r in pairs) / var  # tokens per char
    if slope <= 0:
        return None, None
    return 1 / slope, mean_r - slope * mean_c
