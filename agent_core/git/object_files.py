"""Files navtui itself writes into an object store (loose objects, the store's small packs):
each under a temporary name of its own in the same directory, then renamed to its name."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# git's `prune` removes stale `tmp_obj_*` files, so one left by a killed navtui goes with them.
_PREFIX = "tmp_obj_navtui_"


def write_read_only(target: Path, data: bytes) -> None:
    """`target` holding `data`, read-only, appearing whole or not at all. The temporary name
    is unique per call, so threads writing into one store (batch worktrees share the
    repository's objects) never write through each other's files."""
    fd, temporary = tempfile.mkstemp(prefix=_PREFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), 0o444)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
