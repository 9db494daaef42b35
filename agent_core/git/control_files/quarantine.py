"""Where planted control files go: `.git/navtui/quarantine/<session>-<step>/<path in the git dir>`.

A control file a step added or changed that makes git run code or read another config (a hook,
`commondir`, alternates, an fsmonitor/filter/include setting: `control_effects`) is copied here
byte for byte (never executable; a symlink is kept as a file holding its target, named in the
manifest) and the git dir gets the file back as the previous checkpoint had it, so the user's
next plain `git status` or `git commit` runs nothing the model planted. `MANIFEST.json` beside
the copies says what each was and how to put it back.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from pathlib import Path

from agent_core.git.process.safe_files import read_regular, write_bytes

# A control file over this is taken away all the same, but not copied (git's are small).
MAX_KEPT_BYTES = 16 << 20


class Quarantine:
    """The quarantine of one repository (`root`: `.git/navtui/quarantine`; `common`: its git dir,
    shown to the user as `shown_prefix`)."""

    def __init__(self, root: Path, common: Path, shown_prefix: str, state_shown: str) -> None:
        self._root = root
        self._common = common
        self._shown = shown_prefix
        self._state_shown = state_shown  # how `root` is named to the user
        self.taken: list[str] = []  # one line per file quarantined in this session

    def take(self, label: str, paths: dict[str, str]) -> list[str]:
        """Copy the control files `paths` (relative to the git dir -> what each does) into
        quarantine entry `label`; one line per file naming where it went and how to put it
        back. The caller then puts the originals back."""
        entry = self._root / label
        manifest: list[dict[str, object]] = []
        lines = []
        for rel, why in sorted(paths.items()):
            source = self._common / rel
            kept = entry / rel
            try:
                st = os.lstat(source)
                if stat.S_ISLNK(st.st_mode):
                    data, kind = os.fsencode(os.readlink(source)), "symlink"
                else:
                    data, kind = read_regular(source, MAX_KEPT_BYTES), "file"
                kept.parent.mkdir(parents=True, exist_ok=True)
                write_bytes(kept, data, 0o600)
            except OSError as error:
                lines.append(f"{self._shown}{rel} ({why}) could not be copied to quarantine: "
                             f"{error.strerror or error}; it was taken away all the same")
                continue
            shown_kept = f"{self._state_shown}/{label}/{rel}"
            kept_arg, place = shlex.quote(shown_kept), shlex.quote(f"{self._shown}{rel}")
            back = (f"ln -s \"$(cat {kept_arg})\" {place}" if kind == "symlink"
                    else f"cp {kept_arg} {place}"
                    + (f" && chmod +x {place}" if st.st_mode & 0o100 else ""))
            manifest.append({"path": f"{self._shown}{rel}", "kind": kind,
                             "mode": oct(st.st_mode & 0o7777), "why": why, "put_back": back})
            line = (f"{self._shown}{rel} ({why}) moved to quarantine: {shown_kept} "
                    f"(`{back}` puts it back)")
            lines.append(line)
        if manifest:
            path = entry / "MANIFEST.json"
            try:
                known = json.loads(read_regular(path, 16 << 20))
            except (OSError, ValueError):
                known = []
            write_bytes(path, json.dumps(known + manifest, indent=1).encode())
        self.taken += lines
        return lines
