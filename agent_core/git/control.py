"""Watch the files through which a repository makes git run code: its config, hooks, attributes.

navtui's own git calls ignore them (`agent_core.git.runner`), but the user's next `git commit`
would not; a step that changes them is reported so the user can look before running git.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

Fingerprint = dict[str, str]  # path relative to the repository root -> sha1 of content + mode


def _digest(path: Path) -> str | None:
    try:
        if path.is_symlink():
            return "link:" + str(path.readlink())
        mode = path.stat().st_mode
        return f"{mode & 0o777:o}:" + hashlib.sha1(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _config_lines(path: Path) -> set[str]:
    """`section.key = value` for each setting in a git config file (a plain reading of it)."""
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return set()
    section, lines = "", set()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            name, _, sub = line.strip("[]").partition(" ")
            section = name.lower() + ("." + sub.strip().strip('"') if sub.strip() else "")
            continue
        key, _, value = line.partition("=")
        lines.add(f"{section}.{key.strip()} = {value.strip()}")
    return lines


class ControlWatch:
    """Fingerprints `.git/config`, `config.worktree`, `info/attributes` and every hook."""

    def __init__(self, root: Path, git_dir: Path, common_dir: Path) -> None:
        self._root = root
        self._git_dir = git_dir
        self._common_dir = common_dir
        self._seen = self._fingerprint()
        self._configs = {p: _config_lines(p) for p in self._config_files()}

    def _config_files(self) -> list[Path]:
        return [self._common_dir / "config", self._git_dir / "config.worktree"]

    def _files(self) -> list[Path]:
        hooks = self._common_dir / "hooks"
        try:
            hook_files = sorted(p for p in hooks.iterdir() if not p.name.endswith(".sample"))
        except OSError:
            hook_files = []
        return [*self._config_files(), self._common_dir / "info" / "attributes", *hook_files]

    def _name(self, path: Path) -> str:
        try:
            return path.relative_to(self._root).as_posix()
        except ValueError:
            return str(path)

    def _fingerprint(self) -> Fingerprint:
        found = {}
        for path in self._files():
            digest = _digest(path)
            if digest is not None:
                found[self._name(path)] = digest
        return found

    def changes(self) -> list[str]:
        """What changed since the last call (or since the watch began), one line per file."""
        now = self._fingerprint()
        if now == self._seen:
            return []
        lines = []
        for name in sorted(set(now) | set(self._seen)):
            before, after = self._seen.get(name), now.get(name)
            if before == after:
                continue
            what = "added" if before is None else "removed" if after is None else "changed"
            lines.append(f"{name} ({what}){self._config_detail(name)}")
        self._seen = now
        return lines

    def _config_detail(self, name: str) -> str:
        for path in self._config_files():
            if self._name(path) != name:
                continue
            lines = _config_lines(path)
            added = sorted(lines - self._configs.get(path, set()))
            self._configs[path] = lines
            if added:
                return ": " + "; ".join(added[:8])
        return ""
