"""Confinement: every path a file tool touches resolves inside the repository root."""

from __future__ import annotations

import re
import shlex
from pathlib import Path, PurePosixPath


class PathError(Exception):
    """A path the model may not use; the message says why and what to use instead."""


def _alias_pattern(alias: str) -> re.Pattern[str]:
    # The alias as a whole path component: not part of a longer name or path.
    return re.compile(rf"(?<![\w.~/-]){re.escape(alias.rstrip('/'))}(?![\w.-])")


# `<<EOF`, `<<-EOF`, `<< 'EOF'`, `<<"EOF"`, `<<\EOF` (quoted: the body is literal).
_HEREDOC = re.compile(r"<<(-?)[ \t]*(?:(['\"])([A-Za-z_][\w.-]*)\2|(\\?)([A-Za-z_][\w.-]*))")


def _quoting(command: str) -> list[str]:
    """For each character of a shell command, the quoting it is in: "" (none), "'", "$'", '"',
    "<<" (body of a here-document that expands `$`) or "<<'" (a literal one)."""
    kinds = [""] * len(command)
    state, heredocs, i = "", [], 0
    outer: list[str] = []  # the quoting to go back to at each `)`: `"$(...)"` is unquoted inside
    while i < len(command):
        c = command[i]
        kinds[i] = state
        if state in ("'", "$'") and c == "'" or state == '"' and c == '"':
            state = ""
        elif c == "\\" and state != "'":
            i += 1  # the escaped character keeps the current quoting
            if i < len(command):
                kinds[i] = state
        elif state == '"' and command.startswith("$(", i):
            outer.append(state)
            state, i = "", i + 1
        elif state:
            pass
        elif c == "(":
            outer.append("")
        elif c == ")" and outer:
            state = outer.pop()
        elif c in "'\"":
            state = "$'" if c == "'" and command[i - 1 : i] == "$" else c
        elif command.startswith("<<<", i):
            i += 2  # a here-string, not a here-document
        elif heredoc := _HEREDOC.match(command, i):
            strip, quote, word, escape, bare = heredoc.groups()
            heredocs.append((word or bare, "<<'" if quote or escape else "<<", strip))
            i = heredoc.end() - 1
        elif c == "\n" and heredocs:
            for word, kind, strip in heredocs:  # bodies follow the line, one after the other
                while i + 1 < len(command):
                    end = command.find("\n", i + 1)
                    end = len(command) if end < 0 else end
                    line = command[i + 1 : end]
                    kinds[i + 1 : end] = [kind] * len(line)
                    i = end
                    if (line.lstrip("\t") if strip else line) == word:
                        break
            heredocs = []
            continue
        i += 1
    return kinds


def _quoted_root(root: str, kind: str) -> str:
    """`root` as it must be written inside quoting `kind` to stay one literal path."""
    if kind in ('"', "<<"):
        specials = '\\$`"' if kind == '"' else "\\$`"
        return "".join("\\" + c if c in specials else c for c in root)
    if kind == "<<'":
        return root
    quoted = shlex.quote(root)
    # Inside '...' or $'...': close the quotes, put the quoted root, reopen them.
    return {"'": f"'{quoted}'", "$'": f"'{quoted}$'"}.get(kind, quoted)


def rewrite_alias(command: str, root: Path, alias: str) -> str:
    """Replace the alias (e.g. `/testbed`) in a shell command with the repository root, quoted
    to suit where it stands when the root has spaces, quotes or other shell characters."""
    if not alias:
        return command
    text = str(root)
    if shlex.quote(text) == text:
        return _alias_pattern(alias).sub(lambda _: text, command)
    kinds = _quoting(command)
    return _alias_pattern(alias).sub(lambda m: _quoted_root(text, kinds[m.start()]), command)


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


class PathMap:
    """The one place real paths and the model's paths meet.

    The model knows the repository as `alias` (`/testbed`, as in training). When the shell runs
    with the repository mounted at the alias (`mounted=True`, e.g. a bwrap sandbox), paths are the
    same on both sides and nothing is mapped. Otherwise commands get the alias rewritten to the
    real root (`command_to_real`) and outputs get the real root written back as the alias
    (`to_model`); the user is shown real paths (`to_user`).
    """

    def __init__(self, root: Path, alias: str = "/testbed", *, mounted: bool = False) -> None:
        self.root = Path(root).resolve()
        self.alias = alias.rstrip("/")
        self.mounted = mounted
        spellings = {str(self.root), str(Path(root).absolute())}
        self._real = re.compile(
            "|".join(rf"{re.escape(s)}(?![\w.-])" for s in sorted(spellings, key=len, reverse=True))
        )

    def model_path(self, real: Path) -> str:
        """How the model names the real path `real` (under the alias; relative without one)."""
        rel = real.relative_to(self.root).as_posix()
        if not self.alias:
            return rel
        return self.alias if rel == "." else f"{self.alias}/{rel}"

    def to_model(self, text: str) -> str:
        """`text` (a command's output) with the real root written as the alias."""
        if self.mounted or not self.alias:
            return text
        return self._real.sub(lambda _: self.alias, text)

    def to_user(self, text: str) -> str:
        """`text` the model wrote or read, with the alias shown as the real root."""
        if not self.alias:
            return text
        return _alias_pattern(self.alias).sub(lambda _: str(self.root), text)

    def command_to_real(self, command: str) -> str:
        """A shell command as it must run: the alias rewritten unless the repo is mounted there."""
        if self.mounted:
            return command
        return rewrite_alias(command, self.root, self.alias)
