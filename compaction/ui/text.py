"""Safe text for Streamlit: log content is only ever shown as plain text; markdown is built from our own strings.

Streamlit renders markdown in labels, captions, errors and ``st.markdown``. Anything that may carry text from a log
(file names, error messages that quote a field) goes through :func:`escape_markdown` first; message bodies are shown
with ``st.text`` / ``st.code`` only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Streamlit badge colour per fate (matches :data:`compaction.charts.FATE_COLORS`).
FATE_BADGE_COLORS = {"kept": "gray", "pruned": "orange", "collapsed": "violet", "dropped": "red", "inserted": "green"}
FATE_HELP = {
    "kept": "sent exactly as logged",
    "pruned": "still there, content replaced (placeholder, offload reference, masked…)",
    "collapsed": "removed and represented by an inserted summary or digest",
    "dropped": "removed, nothing stands for it",
    "inserted": "new message written by the strategy (summary, digest, note)",
}
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$=])")


def escape_markdown(text: str) -> str:
    """``text`` with every markdown-significant character backslash-escaped, on one line."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def listed(items: Sequence[str], limit: int = 400) -> str:
    """Markdown for messages that may quote user input: one inline, several as a list; each on one line, cut to
    ``limit`` characters, escaped."""
    shown = [escape_markdown(item if len(item) <= limit else item[: limit - 1] + "…") for item in items]
    return shown[0] if len(shown) == 1 else "\n" + "\n".join(f"- {item}" for item in shown)


def fate_badge(fate: str) -> str:
    """A coloured badge for a fate, built only from fixed strings."""
    color = FATE_BADGE_COLORS.get(fate, "gray")
    return f":{color}-badge[{fate if fate in FATE_BADGE_COLORS else 'unknown'}]"


def colored(text: str, color: str) -> str:
    """Markdown for ``text`` (our own, never log text) in a CSS ``color`` (a ``#rrggbb`` value)."""
    if not re.fullmatch(r"#[0-9a-fA-F]{6}", color):
        raise ValueError(f"expected a #rrggbb colour, got {color!r}")
    return f':color[{text}]{{foreground="{color}"}}'


def setup_title(label: str, color: str) -> str:
    """Markdown for "■ Setup <label>" in the setup's colour (the label is the user's: it is escaped)."""
    return colored(f"■ Setup {escape_markdown(label)}", color)


def clip(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters and how many were left out."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def compact_number(n: float) -> str:
    """A token count in a few characters: ``950``, ``12.3k``, ``118k``, ``3.24M``."""
    value = float(n)
    size = abs(value)
    if size < 1000:
        return f"{value:,.0f}"
    if size < 100_000:
        return f"{value / 1000:.1f}k"
    if size < 1_000_000:
        return f"{value / 1000:.0f}k"
    return f"{value / 1_000_000:.2f}M"
