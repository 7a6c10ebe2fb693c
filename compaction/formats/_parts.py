"""The parts of one message as a reader collects them from content blocks or parts, before it builds the message."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..conversation import File
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import ToolCall
from ..conversation import ToolResult
from ._fields import type_name


@dataclass
class Parts:
    """The parts of one message (or of several records of one API response) as read from its content."""

    texts: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    images: list[Image] = field(default_factory=list)
    files: list[File] = field(default_factory=list)

    def merge(self, other: Parts) -> None:
        """Append ``other``'s parts (a later record of the same response); a repeated tool call is kept once."""
        known = {c.id for c in self.tool_calls if c.id}
        self.texts += other.texts
        self.reasoning += other.reasoning
        self.tool_calls += [c for c in other.tool_calls if not (c.id and c.id in known)]
        self.results += other.results
        self.images += other.images
        self.files += other.files

    def attach(self, media: Image | File | None) -> bool:
        """Keep an image or file part; False when ``media`` is neither (nothing is kept)."""
        if isinstance(media, Image):
            self.images.append(media)
        elif isinstance(media, File):
            self.files.append(media)
        else:
            return False
        return True

    def part_object(self, item: Any, where: str, skipped: str, warnings: list[LoadWarning], *,
                    empty_text: bool = False) -> Mapping[str, Any] | None:
        """``item`` when it is a part object, else None: a bare string is text (kept here; an empty one only with
        ``empty_text``), anything else is skipped with the warning ``<where>: <skipped>, got <its type>``."""
        if isinstance(item, str):
            if item or empty_text:
                self.texts.append(item)
            return None
        if not isinstance(item, Mapping):
            warnings.append(LoadWarning(f"{where}: {skipped}, got {type_name(item)}", field="content"))
            return None
        return item

    @property
    def has_content(self) -> bool:
        return bool(self.texts or self.reasoning or self.tool_calls or self.images or self.files)
