"""OpenAI-style stream chunks back into the raw text a Qwen3 model writes.

Servers with a tool parser (vLLM `--tool-call-parser hermes`, `transformers serve`) take the
model's `<tool_call>` text apart into structured `tool_calls` deltas, and its `<think>` block into
`reasoning_content`. navtui's dialect parsers read model text, so this puts them back together:

    <think>
    {reasoning}
    </think>

    {content}<tool_call>
    {"name": NAME, "arguments": ARGUMENTS}
    </tool_call>

The tool-call text streams as it arrives: the head with the first argument fragment (by then the
name is complete), later fragments as they come, the tail when the call ends (another call starts, content resumes, or the choice
finishes). Arguments are copied verbatim, so malformed JSON from the server stays malformed and
the dialect parser reports it to the model like any other bad output.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

# The repr of the region's text sits on one line (repr escapes newlines).
REGION_PARSE_FAILURE = re.compile(r"could not parse region as JSON\.\s*Content: (?P<content>[^\n]*)")
THINK_OPEN = "<think>\n"
THINK_CLOSE = "\n</think>\n\n"
TOOL_CALL_CLOSE = "}\n</tool_call>"


def tool_call_head(name: str) -> str:
    """Text up to where a tool call's arguments start."""
    return '<tool_call>\n{"name": ' + json.dumps(name) + ', "arguments": '


@dataclass
class _OpenCall:
    index: int
    name: str = ""
    pending_args: list[str] = field(default_factory=list)
    head_sent: bool = False
    args_sent: bool = False


class ChunkAssembler:
    """Feed parsed stream chunks (chat or legacy completions); get text pieces back.

    After the stream, `usage` holds the server's usage object (if it sent one) and
    `finish_reason` the first choice's finish reason.
    """

    def __init__(self) -> None:
        self.usage: dict[str, Any] | None = None
        self.finish_reason: str | None = None
        self._thinking = False
        self._blank_reasoning = ""
        self._thought_ends_line = False
        self._call: _OpenCall | None = None

    def feed(self, chunk: dict[str, Any]) -> str:
        """Text that `chunk` adds to the turn (may be empty)."""
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        out: list[str] = []
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            if choice.get("text"):
                out.append(choice["text"])
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                out.append(self._close_call())
                out.append(self._feed_reasoning(reasoning))
            if delta.get("content"):
                out.append(self._close_think() + self._close_call())
                out.append(delta["content"])
            for call in delta.get("tool_calls") or []:
                out.append(self._close_think())
                out.append(self._feed_call(call))
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
                out.append(self.finish())
        return "".join(out)

    def finish(self) -> str:
        """Close whatever is still open (a thinking block, a tool call)."""
        return self._close_think() + self._close_call()

    def _feed_call(self, delta: dict[str, Any]) -> str:
        out = ""
        index = delta.get("index", 0)
        if self._call is not None and self._call.index != index:
            out += self._close_call() + "\n"
        if self._call is None:
            self._call = _OpenCall(index)
        call = self._call
        function = delta.get("function") or {}
        if function.get("name"):
            call.name += function["name"]
        if function.get("arguments"):
            call.pending_args.append(function["arguments"])
        if not (call.name and call.pending_args):
            return out
        if not call.head_sent:
            out += tool_call_head(call.name)
            call.head_sent = True
        out += "".join(call.pending_args)
        call.pending_args.clear()
        call.args_sent = True
        return out

    def _close_call(self) -> str:
        call, self._call = self._call, None
        if call is None:
            return ""
        out = "" if call.head_sent else tool_call_head(call.name)
        args = "".join(call.pending_args)
        if not (call.args_sent or args):
            args = "{}"
        return out + args + TOOL_CALL_CLOSE

    def _feed_reasoning(self, text: str) -> str:
        """Open the thinking block at the first visible reasoning (servers send the empty
        `<think>\n\n</think>` of thinking-off prompts as whitespace reasoning)."""
        if self._thinking:
            self._thought_ends_line = text.endswith("\n")
            return text
        self._blank_reasoning += text
        if not self._blank_reasoning.strip():
            return ""
        self._thinking = True
        text, self._blank_reasoning = self._blank_reasoning.lstrip("\n"), ""
        self._thought_ends_line = text.endswith("\n")
        return THINK_OPEN + text

    def _close_think(self) -> str:
        self._blank_reasoning = ""
        if not self._thinking:
            return ""
        self._thinking = False
        return THINK_CLOSE[1:] if self._thought_ends_line else THINK_CLOSE


def malformed_tool_call_text(server_message: str) -> str | None:
    """The model's own tool-call text, when `server_message` is `transformers serve` failing to
    parse it (`json parser could not parse region as JSON.\nContent: '<repr>'\nError: ...`).

    Malformed output is the model's mistake, to be shown to it as a format error, not a reason to
    end the session. Returns None for other errors.
    """
    if "could not parse region" not in server_message:
        return None
    match = REGION_PARSE_FAILURE.search(server_message)
    content = None
    if match:
        try:
            content = ast.literal_eval(match.group("content"))
        except (ValueError, SyntaxError):
            content = None
    if not isinstance(content, str):
        content = "\n" + server_message.strip() + "\n"
    return "<tool_call>" + content + "</tool_call>"
