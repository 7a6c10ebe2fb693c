"""Text actions as tool calls, for agents that take actions as text (SWE-agent's thought-action runs,
mini-swe-agent's first trajectory format).

Such an agent's model writes its command in a fenced block of its reply, the agent runs it, and the output comes
back as the next user message. To the model that is a tool call and its result in all but the wire format, and
tool-result strategies must be able to act on it, so the readers turn it into one:

* the assistant message keeps its text without the fenced block (the thought) and gets one tool call named after
  the command word (``open``, ``edit``, ``python``, ``submit``…) with the action text as ``{"command": ...}``;
* the observation that answers it (the next user message the agent wrote for it) becomes that call's tool result,
  its text as sent; both keep their ``meta`` and are flagged ``meta["text_action"] = True``.

The model saw the fenced block, not a JSON call: token counts differ by the few characters of the wrapping.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import replace

from ..conversation import Message
from ..conversation import ResultPart
from ..conversation import ToolCall
from ..conversation import ToolResult

#: the tool call ``extra`` that marks a call read from a text action
TEXT_ACTION_EXTRA: Mapping[str, str] = {"type": "text_action"}
#: the name given to an action with no command word
EMPTY_ACTION_NAME = "empty_action"

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)


def command_name(action: str) -> str:
    """The command word of an action: the first word of its first non-blank line."""
    for line in action.splitlines():
        if line.strip():
            return line.split()[0]
    return EMPTY_ACTION_NAME


def split_action(content: str, action: str) -> tuple[str, str] | None:
    """(thought, command) of a reply whose fenced block holds ``action``: the reply without that block, and the
    block's text as the model wrote it. The block is the last one holding exactly the action, else the last one
    starting with the same command word (the agent may have recorded the action shortened); None when there is
    none."""
    wanted = action.strip()
    blocks = list(_FENCE.finditer(content))
    same = [m for m in blocks if m.group(1).strip() == wanted]
    if not same:
        same = [m for m in blocks if command_name(m.group(1)) == command_name(action)]
    if not same:
        return None
    block = same[-1]
    return (content[: block.start()] + content[block.end():]).strip(), block.group(1)


def with_text_actions(messages: list[Message], actions: Mapping[int, str], call_id: Callable[[int], str],
                      answers: Callable[[int, Message], bool]) -> list[Message]:
    """``messages`` with the action of each assistant message in ``actions`` (by index) as its tool call, and the
    message right after it that ``answers`` accepts as its observation turned into the call's tool result."""
    out: list[Message] = []
    pending: ToolCall | None = None
    for index, message in enumerate(messages):
        if pending is not None and message.role == "user" and answers(index, message):
            out.append(observation_result(message, pending))
            pending = None
            continue
        pending = None
        action = actions.get(index)
        if message.role == "assistant" and action is not None and not message.tool_calls:
            message, pending = action_call(message, action, call_id(index))
        out.append(message)
    return out


def action_call(message: Message, action: str, call_id: str) -> tuple[Message, ToolCall]:
    """An assistant message whose text holds ``action``, as its thought plus the action's tool call (with the
    command as the model wrote it; the recorded ``action`` when the text holds no block for it)."""
    split = split_action(message.text, action)
    texts, command = (message.texts, action) if split is None else ((split[0],) if split[0] else (), split[1])
    call = ToolCall(call_id, command_name(command), {"command": command}, dict(TEXT_ACTION_EXTRA))
    return replace(message, texts=texts, tool_calls=(call,), meta={**message.meta, "text_action": True}), call


def observation_result(message: Message, call: ToolCall, error: bool = False) -> Message:
    """A user message holding an action's output as the tool result of ``call``."""
    parts: tuple[ResultPart, ...] = (*message.texts, *message.images, *message.files)
    result = message.text if not (message.images or message.files) else parts
    return Message("tool", tool_result=ToolResult(call, result, error), meta={**message.meta, "text_action": True})
