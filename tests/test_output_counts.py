"""The shell's bounded capture counts what it cut, so notes about it tell the truth."""

from __future__ import annotations

import re

from agent_core.executor.output import BoundedOutput


def test_the_elision_marker_counts_the_lines_really_cut():
    output = BoundedOutput(1_000)
    data = "".join(f"{n}\n" for n in range(1, 3001)).encode()
    for start in range(0, len(data), 333):
        output.feed(data[start : start + 333])
    text, truncated = output.text()
    assert truncated and output.chars == len(data)
    cut = int(re.search(r"\((\d+) lines; total", text).group(1))
    middle = data[output.head_limit : len(data) - output.tail_limit]
    assert cut == middle.count(b"\n") == 2748

def test_characters_count_utf8_once():
    output = BoundedOutput(10)
    output.feed("é€😀x".encode() * 10)
    assert output.chars == 40 and output.total == 100
