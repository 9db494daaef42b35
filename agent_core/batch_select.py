"""Which instances a batch runs: `--slice A:B` (Python's slice of the file's order, as
mini-swe-agent and SWE-agent have it) and then `--shard I/N` (every N-th instance from the I-th,
counting from 0: shards of one file never overlap and together cover it, so N machines, a
Kubernetes indexed Job or a Slurm array, can each run `--shard $INDEX/N` into outputs of their
own)."""

from __future__ import annotations

import re
from typing import TypeVar

T = TypeVar("T")

_SLICE = re.compile(r"^\s*(-?\d*)\s*:\s*(-?\d*)\s*$")
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class SelectionError(ValueError):
    """A --slice or --shard that does not parse; the message shows the form."""


def parse_slice(text: str) -> slice:
    match = _SLICE.match(text)
    if not match:
        raise SelectionError(f"--slice {text!r}: expected START:STOP, e.g. 0:50 or :10 or 100:")
    start, stop = (int(value) if value else None for value in match.groups())
    return slice(start, stop)


def parse_shard(text: str) -> tuple[int, int]:
    match = _SHARD.match(text)
    if not match:
        raise SelectionError(f"--shard {text!r}: expected INDEX/COUNT, e.g. 0/4 (INDEX counts "
                             "from 0)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or index >= count:
        raise SelectionError(f"--shard {text!r}: INDEX must be 0 to COUNT-1 and COUNT at least 1")
    return index, count


def select(items: list[T], slice_text: str | None = None, shard_text: str | None = None) -> list[T]:
    """`items` cut by the slice, then the shard's share (see the module docstring)."""
    chosen = items[parse_slice(slice_text)] if slice_text else list(items)
    if shard_text:
        index, count = parse_shard(shard_text)
        chosen = chosen[index::count]
    return chosen
