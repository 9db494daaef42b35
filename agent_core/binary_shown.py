"""Binary files in a patch shown by name and size, for front ends that print or draw a diff.

`git diff --binary` writes a binary file's content as base85 (`GIT binary patch`, then `literal
N` or `delta N` and the encoded lines); a reader wants the file and its size, not that text.
The patch itself (`--patch-out`, the log) keeps it: only what is shown changes.
"""

from __future__ import annotations

import re

_SIZE = re.compile(r"(literal|delta) (\d+)$")


def binary_shown(diff: str) -> str:
    """`diff` with each `GIT binary patch` block replaced by one line naming its size."""
    if "GIT binary patch" not in diff:
        return diff
    out: list[str] = []
    skipping = False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            skipping = False
        elif line == "GIT binary patch":
            skipping = True
            out.append("Binary file")
            continue
        elif skipping:
            size = _SIZE.match(line)
            if size and out[-1] == "Binary file":
                kind, count = size.groups()
                out[-1] = (f"Binary file: {count} bytes" if kind == "literal"
                           else f"Binary file changed ({count}-byte delta)")
            continue
        out.append(line)
    return "\n".join(out) + ("\n" if diff.endswith("\n") else "")
