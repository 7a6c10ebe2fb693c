"""Spans out of OpenTelemetry trace exports, in one plain shape, whatever file form they came in.

Forms read: OTLP JSON (``{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans": [...]}]}]}``, as the
collector's file exporter and OTLP/HTTP JSON write it, one object or one per line; attributes as ``{key, value:
{stringValue | intValue | doubleValue | boolValue | arrayValue | kvlistValue | bytesValue}}``) and the SDK's
``span.to_json()`` objects (``ConsoleSpanExporter``: ``context.trace_id``, flat ``attributes``), one per line or as
a JSON list.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from typing import Any

from ..conversation import LoadWarning
from ._fields import as_text
from ._fields import type_name
from .base import Document
from .base import iter_records


@dataclass
class Span:
    """One span: ids (hex text), name, start and end (ns since the epoch, 0 when unknown), attributes, events."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    line: int | None = None


def is_otlp(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("resourceSpans"), list)


def is_sdk_span(value: Any) -> bool:
    return (isinstance(value, Mapping) and isinstance(value.get("context"), Mapping)
            and "span_id" in value["context"] and isinstance(value.get("attributes"), Mapping))


def spans_of(doc: Document, warnings: list[LoadWarning]) -> list[Span]:
    """Every span of the document; what is not a span costs only itself (a warning)."""
    out: list[Span] = []
    for line, record in iter_records(doc):
        if is_otlp(record):
            out += _otlp(record, line, warnings)
        elif is_sdk_span(record):
            span = _sdk(record, line)
            if span is not None:
                out.append(span)
        else:
            warnings.append(LoadWarning(f"skipped: expected OTLP JSON (resourceSpans) or a span object, got "
                                        f"{type_name(record)}", line=line))
    return out


# ------------------------------------------------------------------------------------------------- OTLP
def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value."""
    if not isinstance(value, Mapping):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        values = value["arrayValue"].get("values") if isinstance(value["arrayValue"], Mapping) else None
        return [any_value(v) for v in values] if isinstance(values, list) else []
    if "kvlistValue" in value:
        pairs = value["kvlistValue"].get("values") if isinstance(value["kvlistValue"], Mapping) else None
        return _attributes(pairs)
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _attributes(pairs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs if isinstance(pairs, list) else []:
        if isinstance(pair, Mapping) and isinstance(pair.get("key"), str):
            out[pair["key"]] = any_value(pair.get("value"))
    return out


def _iter(value: Any, key: str) -> Iterator[Mapping[str, Any]]:
    items = value.get(key) if isinstance(value, Mapping) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping):
            yield item


def _nanos(value: Any) -> int:
    try:
        return max(int(value), 0)
    except (TypeError, ValueError):
        return 0


def _otlp(record: Mapping[str, Any], line: int | None, warnings: list[LoadWarning]) -> list[Span]:
    out = []
    for resource_spans in _iter(record, "resourceSpans"):
        resource = _attributes(resource_spans.get("resource", {}).get("attributes")
                               if isinstance(resource_spans.get("resource"), Mapping) else None)
        for scope in (*_iter(resource_spans, "scopeSpans"), *_iter(resource_spans, "instrumentationLibrarySpans")):
            for raw in (*_iter(scope, "spans"),):
                trace_id, span_id = as_text(raw.get("traceId")), as_text(raw.get("spanId"))
                if not trace_id or not span_id:
                    warnings.append(LoadWarning("span without traceId/spanId skipped", line=line, field="spanId"))
                    continue
                events = [(as_text(e.get("name")) or "", _attributes(e.get("attributes"))) for e in _iter(raw, "events")]
                out.append(Span(trace_id.lower(), span_id.lower(), (as_text(raw.get("parentSpanId")) or None),
                                as_text(raw.get("name")) or "", _nanos(raw.get("startTimeUnixNano")),
                                _nanos(raw.get("endTimeUnixNano")), _attributes(raw.get("attributes")), events,
                                resource, line))
    return out


# ---------------------------------------------------------------------------------------------- SDK JSON
def _hex(value: Any) -> str | None:
    text = as_text(value)
    if not text:
        return None
    return text[2:].lower() if text.lower().startswith("0x") else text.lower()


def _iso_nanos(value: Any) -> int:
    text = as_text(value)
    if not text:
        return 0
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return 0
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def _sdk(record: Mapping[str, Any], line: int | None) -> Span | None:
    context = record["context"]
    trace_id, span_id = _hex(context.get("trace_id")), _hex(context.get("span_id"))
    if not trace_id or not span_id:
        return None
    events = [(as_text(e.get("name")) or "", dict(e["attributes"]) if isinstance(e.get("attributes"), Mapping) else {})
              for e in _iter(record, "events")]
    resource = record.get("resource")
    resource_attributes = resource.get("attributes") if isinstance(resource, Mapping) else None
    return Span(trace_id, span_id, _hex(record.get("parent_id")), as_text(record.get("name")) or "",
                _iso_nanos(record.get("start_time")), _iso_nanos(record.get("end_time")), dict(record["attributes"]),
                events, dict(resource_attributes) if isinstance(resource_attributes, Mapping) else {}, line)
