"""Confinement: every path a file tool touches resolves inside the repository root."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath


class PathError(Exception):
    """A path the model may not use; the message says why and what to use instead."""


def _alias_pattern(alias: str) -> re.Pattern[str]:
    # The alias as a whole path component: not part of a longer name or path.
    return re.compile(rf"(?<![\w.~/-]){re.escape(alias.rstrip('/'))}(?![\w.-])")


def rewrite_alias(command: str, root: Path, alias: str) -> str:
    """Replace the alias (e.g. `/testbed`) in a shell command with the repository root."""
    if not alias:
        return command
    return _alias_pattern(alias).sub(lambda _: str(root), command)


class Confinement:
    """Maps the paths a model writes onto real paths under `root`, refusing everything else."""

    def __init__(self, root: Path, alias: str = "/testbed") -> None:
        self.root = Path(root).resolve()
        self.alias = alias.rstrip("/")

    def resolve(self, raw: str) -> Path:
        """The real path for `raw` (relative to the root, absolute inside it, or under the alias).

        Symlinks are followed, so a link pointing outside the repository is refused too.
        """
        if not raw or not raw.strip():
            raise PathError("empty path; give a path relative to the repository root")
        text = raw.strip()
        if self.alias and (text == self.alias or text.startswith(self.alias + "/")):
            text = text[len(self.alias) :].lstrip("/") or "."
        candidate = Path(text) if PurePosixPath(text).is_absolute() else self.root / text
        real = candidate.resolve()
        if real != self.root and not real.is_relative_to(self.root):
            via_link = candidate.absolute() != real and self._inside_lexically(candidate)
            reason = "it is a symlink leading" if via_link else "it is"
            raise PathError(
                f"refused {raw!r}: {reason} outside the repository ({self.root}). "
                f"Use paths inside the repository, relative to its root"
                + (f" or under {self.alias}/" if self.alias else "")
                + "."
            )
        return real

    def _inside_lexically(self, candidate: Path) -> bool:
        parts: list[str] = []
        for part in candidate.absolute().parts[1:]:
            if part == "..":
                if parts:
                    parts.pop()
            elif part != ".":
                parts.append(part)
        return Path("/", *parts).is_relative_to(self.root)

    def display(self, real: Path) -> str:
        """How to name `real` to the model: relative to the root."""
        rel = real.relative_to(self.root)
        return "." if rel == Path(".") else rel.as_posix()
