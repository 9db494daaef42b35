"""The openai backend's pure parts: SSE framing, client-side stop strings, chunk reassembly."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from agent_core.backends.openai_deltas import ChunkAssembler, malformed_tool_call_text
from agent_core.backends.sse import SSEEvent, iter_sse_events
from agent_core.backends.stop_strings import StopScanner


def test_sse_joins_data_lines_skips_comments_and_keeps_event_names() -> None:
    lines = [": ping", "data: {\"a\":", "data: 1}", "", "event: error", "data: boom", "",
             "id: 7", "retry: 10", "data: tail"]
    assert list(iter_sse_events(lines)) == [
        SSEEvent("message", '{"a":\n1}'),
        SSEEvent("error", "boom"),
        SSEEvent("message", "tail"),
    ]


def test_sse_keeps_raw_lines_that_continue_an_event() -> None:
    lines = ['data: {"error": "could not parse.', "Content: 'x'", 'Error: bad"}', ""]
    assert list(iter_sse_events(lines)) == [
        SSEEvent("message", '{"error": "could not parse.\nContent: \'x\'\nError: bad"}')
    ]


def test_stop_after_keeps_the_stop_string_and_ends() -> None:
    scanner = StopScanner(stop_after=["</tool_call>"])
    assert scanner.feed("<tool_call>{}</tool") == "<tool_call>{}"
    assert scanner.feed("_call>\nmore") == "</tool_call>"
    assert scanner.done and scanner.matched == "</tool_call>"
    assert scanner.feed("ignored") == ""


def test_stop_before_cuts_and_held_text_is_released_when_it_is_not_a_stop() -> None:
    scanner = StopScanner(stop_before=["Observation:"])
    assert scanner.feed("ls\nObs") == "ls\n"
    assert scanner.feed("cure") == "Obscure"
    assert scanner.feed(" Observation: x") == " "
    assert scanner.done


def test_earliest_stop_wins() -> None:
    scanner = StopScanner(stop_after=["</tool_call>"], stop_before=["<|im_end|>"])
    assert scanner.feed("a<|im_end|></tool_call>") == "a"
    assert scanner.matched == "<|im_end|>"


@given(
    text=st.text(alphabet="abO:</>xyz\n", max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=8),
)
def test_chunking_never_changes_the_result(text: str, cuts: list[int]) -> None:
    def run(pieces: list[str]) -> str:
        scanner = StopScanner(stop_after=["</x>"], stop_before=["Ob:"])
        out = "".join(scanner.feed(p) for p in pieces)
        return out + scanner.flush()

    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    assert run(pieces) == run([text])
    whole = run([text])
    assert "Ob:" not in whole
    assert whole.count("</x>") <= 1 and (not whole.count("</x>") or whole.endswith("</x>"))


def chunk(**delta) -> dict:
    return {"choices": [{"index": 0, "delta": delta}]}


def call(index: int, **function) -> dict:
    return chunk(tool_calls=[{"index": index, "function": function}])


def test_two_tool_calls_and_content_in_between_are_rebuilt_in_order() -> None:
    assembler = ChunkAssembler()
    pieces = [
        assembler.feed(chunk(content="I will look.")),
        assembler.feed(call(0, name="read")),
        assembler.feed(call(0, arguments='{"path": "a.py"}')),
        assembler.feed(call(1, name="bash", arguments='{"command": "ls"}')),
        assembler.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                        "usage": {"completion_tokens": 9}}),
    ]
    assert pieces[1] == ""
    assert "".join(pieces) == (
        'I will look.<tool_call>\n{"name": "read", "arguments": {"path": "a.py"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>'
    )
    assert assembler.finish_reason == "tool_calls" and assembler.usage == {"completion_tokens": 9}
    for piece in "".join(pieces).split("<tool_call>\n")[1:]:
        assert json.loads(piece.split("\n</tool_call>")[0])["name"] in {"read", "bash"}


def test_call_without_arguments_gets_an_empty_object() -> None:
    assembler = ChunkAssembler()
    text = assembler.feed(call(0, name="submit")) + assembler.finish()
    assert text == '<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call>'


def test_blank_reasoning_opens_no_thinking_block() -> None:
    assembler = ChunkAssembler()
    text = assembler.feed(chunk(reasoning_content="\n\n")) + assembler.feed(chunk(content="hi"))
    assert text == "hi"
    thinking = ChunkAssembler()
    text = thinking.feed(chunk(reasoning="\nhm")) + thinking.feed(chunk(content="ok"))
    assert text == "<think>\nhm\n</think>\n\nok"
    newline_ended = ChunkAssembler()
    text = newline_ended.feed(chunk(reasoning_content="\nhm\n")) + newline_ended.finish()
    assert text == "<think>\nhm\n</think>\n\n"


def test_other_choices_are_ignored() -> None:
    assembler = ChunkAssembler()
    assert assembler.feed({"choices": [{"index": 1, "delta": {"content": "no"}}]}) == ""


def test_malformed_tool_call_recovery() -> None:
    message = ("json parser could not parse region as JSON.\nContent: '\\n{\"name\": 1,}\\n'\n"
               "Error: Expecting property name")
    assert malformed_tool_call_text(message) == '<tool_call>\n{"name": 1,}\n</tool_call>'
    unreadable = "json parser could not parse region as JSON."
    assert malformed_tool_call_text(unreadable) == f"<tool_call>\n{unreadable}\n</tool_call>"
    assert malformed_tool_call_text("CUDA error: out of memory") is None
