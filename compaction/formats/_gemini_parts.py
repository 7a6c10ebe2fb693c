"""Gemini API ``Content`` parts (``PartListUnion``) as message parts: what a Gemini model read or wrote.

A part list is a string, one part object, or a list of strings and part objects. A part holds one of ``text``
(``thought: true`` marks a thought summary), ``inlineData`` / ``fileData`` (media), ``functionCall`` (a tool call:
``id``, ``name``, ``args``), ``functionResponse`` (a tool result: ``id``, ``name``, ``response`` object, optional
nested media ``parts``), ``executableCode`` / ``codeExecutionResult`` (the model's built-in code execution);
``thoughtSignature`` and ``videoMetadata`` ride along with other parts and are not content.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import cast

from ..conversation import File
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import ResultPart
from ..conversation import ToolCall
from ._fields import as_id
from ._fields import as_mapping
from ._fields import as_text
from ._parts import Parts

#: keys of a part that carry no content of their own
_PART_EXTRAS = frozenset({"thought", "thoughtSignature", "videoMetadata", "partMetadata"})


@dataclass(frozen=True)
class FunctionResponse:
    """One ``functionResponse`` part: the call it answers and the result as the model read it."""

    call_id: str | None
    name: str
    result: str | tuple[ResultPart, ...]
    error: bool


@dataclass
class GeminiParts:
    """A part list read: the message parts, and its function responses (answers to earlier calls)."""

    parts: Parts = field(default_factory=Parts)
    responses: list[FunctionResponse] = field(default_factory=list)


def image_of(data: Mapping[str, Any], kind: str) -> Image | File:
    """An ``inlineData`` / ``fileData`` part as an :class:`Image` (for image types) or :class:`File` placeholder."""
    mime = as_text(data.get("mimeType"))
    uri = as_text(data.get("fileUri"))
    if mime is not None and mime.startswith("image/"):
        return Image(mime_type=mime, source="base64" if kind == "inlineData" else uri)
    payload = data.get("data")
    size = len(payload) * 3 // 4 if isinstance(payload, str) else None
    name = as_text(data.get("displayName")) or (uri.rsplit("/", 1)[-1] if uri else None)
    return File(filename=name, mime_type=mime, size_bytes=size)


def response_text(response: Any) -> tuple[str, bool]:
    """The text a model reads for a ``functionResponse.response`` and whether it reports an error.

    Gemini CLI answers every tool with ``{"output": text}`` or ``{"error": text}``; any other object (an MCP tool's
    structured result) reaches the model as that JSON object."""
    if isinstance(response, str):
        return response, False
    if not isinstance(response, Mapping):
        return ("" if response is None else json.dumps(response, ensure_ascii=False, default=str)), False
    output, error = response.get("output"), response.get("error")
    if isinstance(output, str):
        return output, False
    if isinstance(error, str) and "output" not in response:
        return error, True
    if not response:
        return "", False
    return json.dumps(response, ensure_ascii=False, default=str), False


def read_parts(content: Any, where: str, warnings: list[LoadWarning]) -> GeminiParts:
    """Read a ``PartListUnion``; every malformed part costs only itself, with a warning naming it."""
    out = GeminiParts()
    if content is None:
        return out
    items = content if isinstance(content, list) else [content]
    for j, item in enumerate(items):
        _read_part(item, f"{where}, part {j}" if isinstance(content, list) else where, out, warnings)
    return out


def _read_part(raw: Any, where: str, out: GeminiParts, warnings: list[LoadWarning]) -> None:
    parts = out.parts
    item = parts.part_object(raw, where, "skipped, expected text or a part object", warnings)
    if item is None:
        return
    text = item.get("text")
    if isinstance(text, str):
        if text:
            (parts.reasoning if item.get("thought") is True else parts.texts).append(text)
    elif isinstance(item.get("functionCall"), Mapping):
        call = function_call(item["functionCall"])
        if call is None:
            warnings.append(LoadWarning(f"{where}: functionCall without a name skipped", field="functionCall.name"))
        else:
            parts.tool_calls.append(call)
    elif isinstance(item.get("functionResponse"), Mapping):
        out.responses.append(function_response(item["functionResponse"]))
    elif isinstance(item.get("inlineData"), Mapping) or isinstance(item.get("fileData"), Mapping):
        kind = "inlineData" if isinstance(item.get("inlineData"), Mapping) else "fileData"
        media = image_of(item[kind], kind)
        if isinstance(media, Image):
            parts.images.append(media)
        else:
            parts.files.append(media)
    elif isinstance(item.get("executableCode"), Mapping):
        code = as_text(item["executableCode"].get("code"))
        if code:
            parts.texts.append(code)
    elif isinstance(item.get("codeExecutionResult"), Mapping):
        output = as_text(item["codeExecutionResult"].get("output"))
        if output:
            parts.texts.append(output)
    elif not set(item) <= _PART_EXTRAS:
        kinds = ", ".join(sorted(str(k) for k in item if k not in _PART_EXTRAS))[:80]
        warnings.append(LoadWarning(f"{where}: part of unknown kind ({kinds}) skipped", field="content"))


def function_call(raw: Mapping[str, Any]) -> ToolCall | None:
    """A ``functionCall`` part's call (None without a name)."""
    name = as_text(raw.get("name"))
    if not name:
        return None
    args = raw.get("args")
    return ToolCall(as_id(raw.get("id")), name, args if isinstance(args, Mapping) else {})


def function_response(raw: Mapping[str, Any]) -> FunctionResponse:
    """A ``functionResponse`` part: its text, plus the media nested in its ``parts`` (multimodal responses)."""
    text, error = response_text(raw.get("response"))
    media: list[ResultPart] = []
    for nested in cast("list[Any]", raw.get("parts")) if isinstance(raw.get("parts"), list) else ():
        nested = as_mapping(nested)
        for kind in ("inlineData", "fileData"):
            if isinstance(nested.get(kind), Mapping):
                media.append(image_of(nested[kind], kind))
    result: str | tuple[ResultPart, ...] = (text, *media) if media else text
    return FunctionResponse(as_id(raw.get("id")), as_text(raw.get("name")) or "", result, error)


def tool_result_of(content: Any, call_id: str | None, where: str,
                   warnings: list[LoadWarning]) -> tuple[str | tuple[ResultPart, ...], bool] | None:
    """A stored tool result (a part list, as Gemini CLI keeps it on its tool call record) as the model read it:
    the ``functionResponse`` answering ``call_id`` (else the first), with the text and media sent beside it.
    None when the list holds no function response."""
    read = read_parts(content, where, warnings)
    if not read.responses:
        return None
    chosen = next((r for r in read.responses if call_id and r.call_id == call_id), read.responses[0])
    siblings: list[ResultPart] = [*read.parts.texts, *read.parts.images, *read.parts.files]
    if not siblings:
        return chosen.result, chosen.error
    head = (chosen.result,) if isinstance(chosen.result, str) else chosen.result
    return (*head, *siblings), chosen.error
