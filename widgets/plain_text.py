"""Text for places that show plain text (titles, toasts, cards, notes): Markdown's inline code
marks removed, since nothing there renders them."""

from __future__ import annotations

import re

# An inline code span: one or more backticks, text without a line break, as many backticks.
_CODE_SPAN = re.compile(r"(`+)([^`\n]+?)\1")


def plain(text: str) -> str:
    """`text` with each inline code span shown as its content (`x` -> x)."""
    return _CODE_SPAN.sub(lambda match: match.group(2).strip() or match.group(0), text)
