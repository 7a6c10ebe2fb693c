""""Use this in production": a replayed setup as the code or settings a user pastes into their own agent.

:func:`export_setup` resolves a setup and hands it to its family's exporter: each family's exporter lives in its
own module of this package (``export/<family>.py``) and registers itself with :func:`register_exporter`, naming
the strategies of its family it knows. A strategy whose family has no exporter (or that its exporter does not know)
gets one snippet saying so. Shared rendering helpers are in :mod:`.base`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..models import DEFAULT_CONTEXT_WINDOW
from ..replay import setup_arguments
from ..setups import Setup
from ..strategies.base import get_strategy
from ..submodules import import_submodules
from .base import EXPORTERS
from .base import FILL_IN
from .base import ResolvedSetup
from .base import Snippet
from .base import check_counter_spec as check_counter_spec
from .base import register_exporter


def exporters() -> dict[str, Any]:
    """Every family's exporter: family -> (the strategy kinds it knows, the exporter)."""
    import_submodules(__name__, __path__)
    return EXPORTERS.all()


def no_equivalent(setup: ResolvedSetup) -> list[Snippet]:
    """The single snippet for a family without a production API we can target."""
    values = "\n".join(f"  {k} = {json.dumps(v, default=list)}" for k, v in setup.params.items())
    text = (f"{setup.info.title} has no production library API that Compaction Lab can generate code for. "
            f"The replayed setup was:\n  strategy = {setup.info.name}\n{values}\n"
            f"  context_window = {setup.context_window}, compact_at = {setup.compact_at}, compact_to = "
            f"{setup.compact_to}, counter = {setup.counter}\n")
    return [Snippet("text", "No direct equivalent", text, f"See {setup.info.docs_url}" if setup.info.docs_url else "")]


def export_setup(strategy: str | Setup, params: Mapping[str, Any] | None = None, *,
                 context_window: int | None = None, compact_at: float = 0.7, compact_to: float = 0.4,
                 counter: str = "approx") -> list[Snippet]:
    """The production code for a setup (a :class:`~compaction.setups.Setup`, or the same spelled out): ``params``
    are resolved against the strategy's defaults (unknown names are a ``ConfigError``), then rendered for the
    strategy's framework. A window left to the log (None) is the model table's default window."""
    if isinstance(strategy, Setup):
        strategy, params, counter, context_window, compact_at, compact_to = setup_arguments(
            strategy, params, "export_setup(setup)")
    info = get_strategy(strategy)
    resolved = info.resolve_params(params)
    spec = check_counter_spec(counter)
    window = DEFAULT_CONTEXT_WINDOW if context_window is None else int(context_window)
    rendered = ResolvedSetup(info, resolved, window, float(compact_at), float(compact_to), spec)
    kinds, exporter = exporters().get(info.family, (frozenset(), no_equivalent))
    snippets = (exporter if info.name.split(".", 1)[-1] in kinds else no_equivalent)(rendered)
    note = summarizer_note(rendered)
    if note:  # on the last snippet: the code that sets the summarizer up comes last
        snippets[-1] = replace(snippets[-1], note=f"{snippets[-1].note} {note}".strip())
    return snippets


def export(setup: Setup) -> list[Snippet]:
    """``setup`` as production code or settings for its framework (see :func:`export_setup`)."""
    return export_setup(setup)


def summarizer_note(setup: ResolvedSetup) -> str:
    """What the replay's simulated summarizer settings mean in production (nothing for non-summarizing setups)."""
    if "summarizer" not in setup.params or setup.params.get("second") == "sliding_window":
        return ""
    return ("The replay's summarizer settings (summarizer, summary_tokens) only simulated the summaries; in "
            "production the model you fill in writes them.")



__all__ = ["FILL_IN", "ResolvedSetup", "Snippet", "check_counter_spec", "export", "export_setup", "exporters",
           "no_equivalent", "register_exporter", "summarizer_note"]
