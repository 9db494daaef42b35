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
import stat
from pathlib import Path


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
                    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
                    with os.fdopen(fd, "rb") as file:
                        data, kind = file.read(), "file"
                kept.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "wb") as file:
                    file.write(data)
            except OSError as error:
                lines.append(f"{self._shown}{rel} ({why}) could not be copied to quarantine: "
                             f"{error.strerror or error}; it was taken away all the same")
                continue
            shown_kept = f"{self._state_shown}/{label}/{rel}"
            back = (f"ln -s \"$(cat {shown_kept})\" {self._shown}{rel}" if kind == "symlink"
                    else f"cp {shown_kept} {self._shown}{rel}"
                    + (f" && chmod +x {self._shown}{rel}" if st.st_mode & 0o100 else ""))
            manifest.append({"path": f"{self._shown}{rel}", "kind": kind,
                             "mode": oct(st.st_mode & 0o7777), "why": why, "put_back": back})
            line = (f"{self._shown}{rel} ({why}) moved to quarantine: {shown_kept} "
                    f"(`{back}` puts it back)")
            lines.append(line)
        if manifest:
            path = entry / "MANIFEST.json"
            try:
                known = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
            except (OSError, ValueError):
                known = []
            path.write_text(json.dumps(known + manifest, indent=1), encoding="utf-8")
        self.taken += lines
        return lines
