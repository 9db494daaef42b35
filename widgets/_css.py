"""Each widget keeps its styles in a `.tcss` file beside its module."""

from __future__ import annotations

from pathlib import Path


def css_beside(module_file: str) -> str:
    """The text of the `.tcss` file that sits next to `module_file` (same stem)."""
    return Path(module_file).with_suffix(".tcss").read_text(encoding="utf-8")
