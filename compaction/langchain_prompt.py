"""The request LangChain's ``SummarizationMiddleware`` (langchain 1.5.2) sends to its summary model, re-created.

The middleware renders the messages to summarize with ``get_buffer_string(messages, format="xml")``
(langchain-core 1.8), fills them into its prompt with ``summary_prompt.format(messages=…)``, strips the end of the
result, and invokes the model with that one string: one human message.

The XML rendering, per message (messages joined by a newline):

- ``<message type="human|ai|system|tool">…</message>``; the content is XML-escaped (``&``, ``<``, ``>``), list
  content blocks are joined by one space: text blocks as their text, reasoning blocks as
  ``<reasoning>…</reasoning>``, image blocks with a URL as ``<image url="…" />``; base64 images, files and empty
  blocks are left out. A message's ``name`` and a tool message's call id are not shown.
- an AI message with tool calls is nested: ``<message type="ai">``, then ``  <content>…</content>`` (only when it
  has content), then one ``  <tool_call id="…" name="…">ARGS</tool_call>`` line per call (``ARGS`` the arguments
  as ``json.dumps(…, ensure_ascii=False)``, escaped; ids longer than 64 characters cut to 64 plus ``...``), then
  ``</message>``, the lines joined by newlines.

Attribute values are quoted as ``xml.sax.saxutils.quoteattr`` quotes them. Our messages are seen as LangChain
holds them (:func:`compaction.langchain_counter.langchain_content`).

The prompt is filled as ``str.format`` fills it, but only ``{messages}`` (with an optional ``!r``/``!s``/``!a``
conversion and a format spec) may appear: LangChain would fail on any other field at its first summary, so such a
prompt is refused up front with the reason. ``{{`` and ``}}`` are literal braces, as in ``str.format``.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape
from xml.sax.saxutils import quoteattr

from .conversation import Message
from .errors import ConfigError
from .langchain_counter import langchain_content

#: our roles as the ``type`` attribute of LangChain's XML messages
XML_TYPES = {"user": "human", "assistant": "ai", "system": "system", "tool": "tool"}
#: tool-call ids longer than this are shown cut, followed by ``...``
TOOL_CALL_ID_LIMIT = 64
_FORMATTER = string.Formatter()
_CONVERSIONS: dict[str | None, Callable[[object], str]] = {None: str, "s": str, "r": repr, "a": ascii}


# ------------------------------------------------------------------------------------------------ XML transcript
def xml_transcript(messages: Sequence[Message]) -> str:
    """``get_buffer_string(messages, format="xml")`` of our messages."""
    return "\n".join(xml_message(m) for m in messages)


def xml_message(message: Message) -> str:
    """One message as ``get_buffer_string(..., format="xml")`` renders it."""
    kind = quoteattr(XML_TYPES[message.role])
    content = langchain_content(message)
    if isinstance(content, str):
        parts = [escape(content)] if content else []
    else:
        parts = [text for text in map(_xml_block, content) if text]
    if message.role != "assistant" or not message.tool_calls:
        return f"<message type={kind}>{' '.join(parts)}</message>"
    lines = [f"<message type={kind}>"]
    if parts:
        lines.append(f"  <content>{' '.join(parts)}</content>")
    for call in message.tool_calls:
        arguments = escape(json.dumps(dict(call.arguments), ensure_ascii=False))
        lines.append(f"  <tool_call id={quoteattr(_shown_id(call.id or ''))} name={quoteattr(call.name or '')}>"
                     f"{arguments}</tool_call>")
    lines.append("</message>")
    return "\n".join(lines)


def _shown_id(call_id: str) -> str:
    return call_id if len(call_id) <= TOOL_CALL_ID_LIMIT else call_id[:TOOL_CALL_ID_LIMIT] + "..."


def _xml_block(block: Mapping[str, Any]) -> str | None:
    """One content block of :func:`langchain_content` (text, reasoning, image or file), or None when left out."""
    kind = block.get("type")
    if kind == "text":
        return escape(block["text"]) if block["text"] else None
    if kind == "reasoning":
        return f"<reasoning>{escape(block['reasoning'])}</reasoning>" if block["reasoning"] else None
    if kind == "image":
        url = block.get("url")
        if block.get("base64") or not url or url.startswith("data:"):
            return None
        return f"<image url={quoteattr(url)} />"
    return None  # files: a block type the XML rendering does not show


# ------------------------------------------------------------------------------------------------ the prompt
def check_summary_prompt(template: str) -> None:
    """Raise ``ValueError`` (naming ``summary_prompt`` and the reason) unless ``template.format(messages=…)`` works
    and uses no field but ``messages``."""
    fill_summary_prompt(template, "")


def fill_summary_prompt(template: str, messages: str) -> str:
    """``template.format(messages=messages).rstrip()``, with only ``{messages}`` allowed as a field."""
    try:
        pieces = list(_FORMATTER.parse(template))
    except ValueError as exc:
        raise ConfigError(f"summary_prompt: {exc} (LangChain fills it with str.format; write {{{{ and }}}} for a "
                         "literal brace)") from None
    out: list[str] = []
    for literal, field, spec, conversion in pieces:
        out.append(literal)
        if field is None:
            continue
        if field != "messages":
            raise ConfigError(f"summary_prompt: {{{field}}} is not a field LangChain fills (only {{messages}} is; "
                             "write {{ and }} for a literal brace)")
        if spec and "{" in spec:
            raise ConfigError(f"summary_prompt: the format spec {spec!r} of {{messages}} holds a field")
        if conversion not in _CONVERSIONS:
            raise ConfigError(f"summary_prompt: unknown conversion !{conversion} of {{messages}} (!r, !s or !a)")
        try:
            out.append(format(_CONVERSIONS[conversion](messages), spec or ""))
        except ValueError as exc:
            raise ConfigError(f"summary_prompt: {{messages:{spec}}}: {exc}") from None
    return "".join(out).rstrip()
