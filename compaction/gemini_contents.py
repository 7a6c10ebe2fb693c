"""Messages as Gemini API ``Content``\\ s: the history Gemini CLI's ``GeminiChat`` holds and measures.

Gemini CLI keeps its chat as a list of ``{role: "user" | "model", parts: [...]}`` objects. Our messages map onto it as
the CLI builds it:

- an assistant message is one ``model`` content: a ``text`` part per text, then a ``functionCall`` part
  (``{id, name, args}``) per tool call; thoughts are not kept (``GeminiChat`` filters thought parts out of history);
- the tool results that follow one another form one ``user`` content, a ``functionResponse`` part each
  (``{id, name, response: {output: text}}``, or ``{error: text}`` for a failed call, with images or files of the
  result as nested ``parts``), as the CLI sends every response of a turn back in one request;
- any other user message is its own ``user`` content (text parts, then media as ``inlineData`` / ``fileData`` parts
  holding the MIME type: the log keeps no bytes);
- system messages are not contents: Gemini CLI sends its system prompt as ``systemInstruction``
  (:func:`system_parts`).

What the log does not record is not rebuilt: thought signatures on function calls, a tool's structured (non-text)
response object (the reader keeps it as JSON text, read here as ``output``), media bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .conversation import File
from .conversation import Image
from .conversation import Message
from .conversation import ResultPart
from .conversation import ToolCall

#: meta key of a tool message whose response object holds this key (the CLI answers a masked or truncated output
#: with ``{output: ...}`` even where the call had failed)
RESPONSE_KEY = "gemini_response_key"
#: how Gemini CLI's environment-context turn (the first turn of every chat) begins, in current and older versions
ENVIRONMENT_MARKERS = ("<session_context>", "This is the Gemini CLI. We are setting up the context for our chat.")


def media_part(part: Image | File) -> dict[str, Any]:
    """An image or file as the ``inlineData`` / ``fileData`` part it was (MIME type and URI; no bytes)."""
    if isinstance(part, Image):
        mime = part.mime_type if part.mime_type and part.mime_type.startswith("image/") else "image/unknown"
        if part.source and part.source != "base64":
            return {"fileData": {"mimeType": mime, "fileUri": part.source}}
        return {"inlineData": {"mimeType": mime}}
    return {"inlineData": {"mimeType": part.mime_type or "application/octet-stream"}}


def response_key(message: Message) -> str:
    """``output`` or ``error``: the key of the response object a tool message answers with."""
    result = message.tool_result
    chosen = message.meta.get(RESPONSE_KEY)
    if chosen in ("output", "error"):
        return str(chosen)
    return "error" if result is not None and result.error else "output"


def result_text(result: str | tuple[ResultPart, ...]) -> str:
    """The text of a tool result (its text pieces joined, media left out)."""
    if isinstance(result, str):
        return result
    return "".join(part for part in result if isinstance(part, str))


def result_media(result: str | tuple[ResultPart, ...]) -> list[Image | File]:
    """The images and files of a tool result."""
    return [] if isinstance(result, str) else [part for part in result if not isinstance(part, str)]


def function_response(message: Message) -> dict[str, Any]:
    """A tool message's ``functionResponse`` part."""
    result = message.tool_result
    assert result is not None, "function_response needs a tool message"
    body: dict[str, Any] = {}
    if result.call_id:
        body["id"] = result.call_id
    body["name"] = result.tool_name
    body["response"] = {response_key(message): result_text(result.result)}
    media = result_media(result.result)
    if media:
        body["parts"] = [media_part(m) for m in media]
    return {"functionResponse": body}


def function_call(call: ToolCall) -> dict[str, Any]:
    """A tool call's ``functionCall`` part."""
    body: dict[str, Any] = {"id": call.id} if call.id else {}
    body["name"] = call.name
    body["args"] = dict(call.arguments)
    return {"functionCall": body}


def message_parts(message: Message) -> list[dict[str, Any]]:
    """The parts a message contributes to its content (for a system message: to ``systemInstruction``)."""
    if message.tool_result is not None:
        return [function_response(message)]
    parts: list[dict[str, Any]] = [{"text": text} for text in message.texts]
    parts += [function_call(call) for call in message.tool_calls]
    non_text: tuple[Image | File, ...] = (*message.images, *message.files)
    parts += [media_part(m) for m in non_text]
    return parts


def content_role(message: Message) -> str | None:
    """The role of the content a message belongs to (None for a system message)."""
    if message.role == "system":
        return None
    return "model" if message.role == "assistant" else "user"


@dataclass(frozen=True)
class Span:
    """One content: its role and the messages ``start..end-1`` (of the list it was read from) it is made of."""

    role: str
    start: int
    end: int

    @property
    def positions(self) -> range:
        return range(self.start, self.end)


def spans(messages: Sequence[Message]) -> list[Span]:
    """The contents a list of messages forms, as spans of it: consecutive tool results share one ``user`` content,
    every other message but a system one is a content of its own (system messages are skipped)."""
    out: list[Span] = []
    for i, message in enumerate(messages):
        role = content_role(message)
        if role is None:
            continue
        if message.tool_result is not None and out and out[-1].end == i and _is_tool_run(messages, out[-1]):
            out[-1] = Span(role, out[-1].start, i + 1)
        else:
            out.append(Span(role, i, i + 1))
    return out


def _is_tool_run(messages: Sequence[Message], span: Span) -> bool:
    return messages[span.start].tool_result is not None


def contents(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``Content`` objects of a list of messages (system messages left out)."""
    return [{"role": s.role, "parts": [p for i in s.positions for p in message_parts(messages[i])]}
            for s in spans(messages)]


def system_parts(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``systemInstruction`` parts of a list of messages (their system messages' texts)."""
    return [p for m in messages if m.role == "system" for p in message_parts(m)]


def is_environment_context(message: Message) -> bool:
    """Whether a message is the environment-context turn Gemini CLI opens every chat with (and re-creates after a
    compression)."""
    return (message.role == "user" and message.tool_result is None and bool(message.texts)
            and message.texts[0].lstrip().startswith(ENVIRONMENT_MARKERS))
