"""Confinement (every path a file tool touches resolves inside the repository root) and the
PathMap between the model's `/testbed` and the real root."""

from __future__ import annotations

import errno
import os
import re
import shlex
import stat
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath

from agent_core.actions import Action, Bash, Edit, Read, Search, StrReplaceEditor
from agent_core.steps import Observation, StepRecord


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


def refuse_unusable(text: str, what: str) -> None:
    """Raise PathError when `text` cannot be a file name or program argument at all: a NUL byte
    (which ends a C string) or a character no file system encoding holds (a lone surrogate
    that does not stand for an undecodable byte)."""
    if "\0" in text:
        raise PathError(f"refused {what} {text!r}: it contains a NUL byte (\\x00), which no file "
                        "name or argument can hold; remove it.")
    try:
        os.fsencode(text)
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise PathError(f"refused {what} {text!r}: it contains U+{ord(bad):04X}, half of a UTF-16 "
                        "surrogate pair, which is not valid Unicode; write the character itself."
                        ) from exc


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
        refuse_unusable(raw, "path")
        text = raw.strip()
        if self.alias and (text == self.alias or text.startswith(self.alias + "/")):
            text = text[len(self.alias) :].lstrip("/") or "."
        candidate = Path(text) if PurePosixPath(text).is_absolute() else self.root / text
        try:
            real = candidate.resolve()
        except (RuntimeError, OSError) as exc:  # RuntimeError: a loop, on Python < 3.13
            raise PathError(
                f"refused {raw!r}: it is a symbolic link loop (a link that points, directly or "
                "through others, back to itself); remove it with `rm` or use another path."
            ) from exc
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

    def open(self, real: Path, flags: int, mode: int = 0o666, *, make_parents: bool = False) -> int:
        """A file descriptor for `real` (a path `resolve` returned), opened from the root one
        component at a time without following any symlink (`O_NOFOLLOW`, `dir_fd`).

        `resolve` already followed the symlinks there were, so a symlink met here was swapped in
        after the check: it raises PathError instead of leading outside the repository. With
        `make_parents`, missing directories are created on the way.
        """
        parent, name = self._open_parent(real, make_parents)
        try:
            return self._at(real, parent, name, lambda: os.open(
                name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=parent
            ))
        finally:
            os.close(parent)

    def unlink(self, real: Path) -> None:
        """Remove the file `real` (under the root, no symlink followed on the way)."""
        parent, name = self._open_parent(real, False)
        try:
            os.unlink(name, dir_fd=parent)
        finally:
            os.close(parent)

    def _open_parent(self, real: Path, make_parents: bool) -> tuple[int, str]:
        """An fd of `real`'s directory, walked down from the root, and `real`'s own name."""
        parts = real.relative_to(self.root).parts
        if not parts:
            raise PathError("the repository root itself is not a file; name a file inside it")
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for part in parts[:-1]:
                if make_parents:
                    try:
                        os.mkdir(part, dir_fd=fd)
                    except FileExistsError:
                        pass
                flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
                step = self._at(real, fd, part, lambda: os.open(part, flags, dir_fd=fd))
                os.close(fd)
                fd = step
        except BaseException:
            os.close(fd)
            raise
        return fd, parts[-1]

    def _at(self, real: Path, dir_fd: int, name: str, call: Callable[[], int]) -> int:
        """`call()`, an open of `name` in `dir_fd`; PathError when `name` is a symlink there."""
        try:
            return call()
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            # ENOTDIR from a plain file on the way is the model's mistake; from a symlink (or a
            # name that is a directory again by now) it is a swap.
            try:
                mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
            except OSError:
                mode = stat.S_IFLNK
            if exc.errno == errno.ENOTDIR and not (stat.S_ISLNK(mode) or stat.S_ISDIR(mode)):
                raise
        raise PathError(
            f"refused {self.display(real)!r}: {name!r} on its way became a symbolic link after the "
            "path was checked; file tools do not follow it. Look at it with `ls -l`."
        )

    def display(self, real: Path) -> str:
        """How to name `real` to the model: relative to the root."""
        rel = real.relative_to(self.root)
        return "." if rel == Path(".") else rel.as_posix()


class PathMap:
    """The one place real paths and the model's paths meet.

    The model knows the repository as `alias` (`/testbed`, as in training). When the shell runs
    with the repository mounted at the alias (`mounted=True`, e.g. a bwrap sandbox), commands
    need no rewriting. Otherwise commands get the alias rewritten to the real root
    (`command_to_real`). Either way outputs get the real root written back as the alias
    (`to_model`: a sandboxed command can still print it, e.g. from a worktree's `.git` file);
    the user is shown real paths (`to_user`, and `record_to_user` for every view of a step:
    its actions and its observation, while the record itself keeps what the model wrote).
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
        if not self.alias:
            return text
        return self._real.sub(lambda _: self.alias, text)

    def to_user(self, text: str) -> str:
        """`text` the model wrote or read, with the alias shown as the real root."""
        if not self.alias:
            return text
        return _alias_pattern(self.alias).sub(lambda _: str(self.root), text)

    def action_to_user(self, action: Action) -> Action:
        """`action` as the user is shown it: its bash command or its path with the real root."""
        if isinstance(action, Bash):
            return replace(action, command=self.to_user(action.command))
        if isinstance(action, Read | Search | Edit | StrReplaceEditor) and action.path:
            return replace(action, path=self.to_user(action.path))
        return action

    def observation_to_user(self, observation: Observation) -> Observation:
        """`observation` with the alias in its output and error shown as the real root."""
        error = None if observation.error is None else self.to_user(observation.error)
        return replace(observation, output=self.to_user(observation.output), error=error)

    def record_to_user(self, record: StepRecord) -> StepRecord:
        """A copy of `record` for the user's views (timeline, output, detail, transcript)."""
        proposed = replace(record.proposed, action=self.action_to_user(record.proposed.action))
        action = None if record.action is None else self.action_to_user(record.action)
        observation = None if record.observation is None else self.observation_to_user(record.observation)
        return replace(record, proposed=proposed, action=action, observation=observation)

    def command_to_real(self, command: str) -> str:
        """A shell command as it must run: the alias rewritten unless the repo is mounted there."""
        if self.mounted:
            return command
        return rewrite_alias(command, self.root, self.alias)
