"""Patches as navtui holds them: text whose non-UTF-8 bytes are kept as surrogate escapes.

`Workspace.patch()` decodes git's bytes with `surrogateescape`; `patch_bytes` turns such text
back into exactly those bytes, so a latin-1 file name or content survives saving and applying.
"""

from __future__ import annotations

from pathlib import Path

from agent_core.git.process.safe_files import write_bytes


def patch_bytes(patch: str) -> bytes:
    """The exact bytes of a patch held as surrogate-escaped text (newline-terminated)."""
    data = patch.encode("utf-8", "surrogateescape")
    return data if not data or data.endswith(b"\n") else data + b"\n"


def write_patch(patch: str, path: Path | str) -> Path:
    """Write `patch` byte for byte to `path` (parents created); returns the absolute path.

    Into a new file renamed over `path`: a link or hard link the model planted there is
    replaced, never written through (it could point at `~/.bashrc`)."""
    target = Path(path).expanduser().absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    write_bytes(target, patch_bytes(patch), 0o644)
    return target
