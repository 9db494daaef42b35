"""Where `L`'s rule suggestions come from and what they leave behind, in navtui's state
directory (platformdirs' user state dir): the repositories navtui has run in (read only with
`suggest_from_all_repositories = true` in `[rules]`), and the suggestions the user declined.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent_core.rule_suggestions import Decided, logged_decisions

REPOSITORIES = "repositories.txt"  # one repository root a line
DECLINED = "declined-rules.txt"  # one `Suggestion.key` a line


def state_dir() -> Path:
    import platformdirs

    return platformdirs.user_state_path("navtui")


def _lines(path: Path) -> list[str]:
    try:
        return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError):
        return []


def _append(path: Path, line: str) -> None:
    """Add `line` to `path` (one O_APPEND write: concurrent navtui processes never interleave)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line + "\n").encode("utf-8", "surrogateescape"))
        finally:
            os.close(fd)
    except OSError:
        pass  # a read-only state dir: suggestions only lose what this would have added


def remember_repository(root: Path) -> None:
    """Note that navtui runs in the repository at `root` (once)."""
    path = state_dir() / REPOSITORIES
    if str(root) not in _lines(path):
        _append(path, str(root))


def repositories(current: Path | None, everywhere: bool) -> list[Path]:
    """The repositories whose logs the suggestions read: `current`, and with `everywhere` every
    one navtui has run in that is still there."""
    found = [current] if current is not None else []
    if everywhere:
        found += [Path(line) for line in _lines(state_dir() / REPOSITORIES)
                  if Path(line).is_dir() and Path(line) != current]
    return found


def decisions(current: Path | None, everywhere: bool) -> list[Decided]:
    """A person's decisions in the logs of `repositories(current, everywhere)`."""
    return logged_decisions(repositories(current, everywhere))


def declined() -> list[str]:
    """The keys of the suggestions the user declined."""
    return _lines(state_dir() / DECLINED)


def decline(key: str) -> None:
    _append(state_dir() / DECLINED, key)
