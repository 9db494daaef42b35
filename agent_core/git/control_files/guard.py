"""Git's control files across a session's checkpoints: what each step changed in them and what
that would do on the user's next git command, the quarantine of what plants code, and the
reports a session gives about them (after each step and at the end)."""

from __future__ import annotations

import os
from pathlib import Path

from agent_core.git.control_files.control import MAX_FILE_BYTES, ControlFiles
from agent_core.git.control_files.control_effects import hook_command
from agent_core.git.control_files.quarantine import Quarantine


class ControlGuard:
    """Watches `control` for one session; planted files go to `quarantine`."""

    def __init__(self, control: ControlFiles, quarantine: Quarantine) -> None:
        self.control = control
        self.quarantine = quarantine
        self.told: str | None = None  # the capture last reported
        self._warnings: list[str] = []

    def after_step(
        self, label: str, previous: str | None, now: str, index: Path, trusted: bool,
    ) -> tuple[str, str | None]:
        """Name what changed from capture `previous` to `now` and what each would do; move what
        plants code to quarantine entry `label` and put the previous file back (nothing of that
        for a `trusted` change: the user's own). Returns (the capture to record, the capture as
        the step left it when something was quarantined)."""
        if previous is None or previous == now or trusted:
            return now, None
        prefix = self.control.shown_prefix
        planted: dict[str, str] = {}
        for change in self.control.changes(previous, now):
            effect = self.control.effect(change)
            if effect.planted:
                planted[change.path] = effect.what
            else:
                self._warnings.append(f"{prefix}{change.path} ({change.what}): {effect.what}")
        # A config or hook navtui could not read (over the size cap, unreadable): what it runs
        # cannot be told, so it never stays.
        unread = set(self.control.left_out(now)) - set(self.control.left_out(previous))
        for path in unread:
            planted[path] = (f"over {MAX_FILE_BYTES:,} bytes or unreadable: navtui cannot tell "
                             "what it runs")
        if not planted:
            return now, None
        self._warnings += self.quarantine.take(label, planted)
        _, left = self.control.restore(now, previous, only=set(planted))
        for path in unread - set(self.control.paths_in(previous)):  # (no earlier file to put back)
            target = self.control.common / path
            try:
                if os.path.realpath(target.parent) != str(target.parent):
                    raise OSError(f"{target.parent.name} is no longer a directory of the git dir")
                os.unlink(target)
            except FileNotFoundError:
                pass
            except OSError as error:
                left.append(f"{prefix}{path}: {error.strerror or error}")
        self._warnings += [f"{line} (left in place: remove it by hand)" for line in left]
        return self.control.current(index), now

    def tree_hooks(self, paths: list[str]) -> None:
        """Warn about working-tree files a step changed in the hooks directory `core.hooksPath`
        names (husky's `.husky`, or `.husky/_` whose scripts call `.husky/<hook>`)."""
        where = self.control.tree_hooks_dir
        if where is None:
            return
        dirs = {where, where.rsplit("/", 1)[0]} if where.endswith("/_") else {where}
        for path in paths:
            folder, _, name = path.rpartition("/")
            if folder in dirs and not name.endswith(".sample"):
                state = "removed" if not os.path.lexists(self.control.root / path) else "changed"
                self._warnings.append(
                    f"{path} ({state}): a hook (core.hooksPath is {where}): runs on your next "
                    f"{hook_command(name)}; it is an ordinary file of your project too, so the "
                    "step's diff shows it and undo puts it back"
                )

    def warnings(self) -> list[str]:
        """The lines gathered since the last call."""
        lines, self._warnings = self._warnings, []
        return lines

    def changes_to_tell(self, now: str | None) -> list[str]:
        """Control files that changed up to capture `now` since the last call (one line each;
        a config's new settings named)."""
        told, self.told = self.told, now
        if told is None or now is None:
            return []
        return self.control.describe(self.control.changes(told, now))

    def changed_since_start(self, first: str | None, last: str | None) -> str | None:
        """What the session left changed from capture `first` to `last` and how to get the
        originals back by hand, or None when nothing is."""
        if not first or not last:
            return None
        changes = self.control.changes(first, last)
        prefix = self.control.shown_prefix
        if not changes:
            return None
        added = [prefix + c.path for c in changes if c.what == "added"]
        return (
            "; ".join(self.control.describe(changes))
            + f". As they were before the session: `git show {first}:PATH` (PATH inside "
            f"{prefix}, e.g. `config`)"
            + (f"; not there before: {', '.join(added)}" if added else "")
        )
