"""The user's own index (`.git/index`): a commit of what they staged at a session's start, and
putting it back on undo."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from agent_core.git.objects.commits import commit_tree
from agent_core.git.errors import WorkspaceError
from agent_core.git.checkpoints.head import HeadState
from agent_core.git.process.runner import GitRunner
from agent_core.git.process.safe_files import MAX_INDEX_BYTES, copy_regular, open_regular

__all__ = ["clear_user_marks", "copy_user_index", "restore_user_index", "staged_commit"]

# Attributes under which `git add` records other bytes than the file's (line endings, $Id$,
# clean filters such as git-lfs', encodings).
_CONVERSIONS = ("text", "eol", "crlf", "ident", "filter", "working-tree-encoding")
_OFF = (b"unspecified", b"unset")
_REGULAR = (b"100644", b"100755")


def copy_user_index(git: GitRunner, user_index: Path, target: Path) -> None:
    """Copy the user's index to `target` whole. A split index (`core.splitIndex`) keeps most
    entries in a `sharedindex.<id>` file beside it, which a copy elsewhere would not find: it is
    written whole into a temporary file beside the index first (one git process, only then)."""
    try:
        split = any(name.startswith("sharedindex.") for name in os.listdir(user_index.parent))
    except OSError:
        split = False
    if not split:
        copy_index(user_index, target)
        return
    temporary = _copy_beside(user_index, user_index, "index.navtui-whole-")
    try:
        git.run_full("-c", "core.splitIndex=false", "update-index", "--no-split-index",
                     env={"GIT_INDEX_FILE": str(temporary)})
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
        temporary.with_name(temporary.name + ".lock").unlink(missing_ok=True)


def copy_index(source: Path, target: Path) -> None:
    """A copy of index file `source` at `target` (a regular file, no link followed, capped)."""
    copy_regular(source, target, MAX_INDEX_BYTES, 0o644)


def clear_user_marks(git: GitRunner, index: Path, common_dir: Path) -> int:
    """Clear, in navtui's copy `index` of the user's index, what makes git skip reading a file;
    the number of files whose stat data was dropped (see `_forget_converted_stats`).

    The marks: assume-unchanged everywhere, skip-worktree where the file is in the working tree
    (a sparse checkout marks the paths it leaves out, which must stay out). The user keeps local
    edits in such files; unmarked, they are in checkpoint 0 and every later edit is seen. The
    user's own index keeps its marks (undo to step 0 puts its copy back)."""
    listing = git.run("ls-files", "-v", "-s", "-z", index=index).split(b"\0")
    assumed: list[bytes] = []
    skipped: list[bytes] = []
    for record in listing:
        tag = record[:1]
        if tag == b"H" or not tag:  # (most entries: no mark; read no further)
            continue
        path = record.partition(b"\t")[2]
        if tag.islower():
            assumed.append(path)
        if tag in (b"S", b"s") and os.path.lexists(git.root / os.fsdecode(path)):
            skipped.append(path)
    for flag, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
        if paths:  # (one mark per call: git applies only one of them)
            git.run("update-index", "-z", flag, "--stdin", index=index,
                    stdin=b"".join(path + b"\0" for path in paths))
    return _forget_converted_stats(git, index, common_dir, listing)


def _copy_beside(path: Path, source: Path, prefix: str) -> Path:
    """A copy of `source` in a new file beside `path` (with `path`'s permissions, to be renamed
    over it), of a name no one can guess. The model can write into .git: a link planted at a
    fixed name there would have had navtui write through it, wherever it pointed."""
    handle, name = tempfile.mkstemp(prefix=prefix, dir=path.parent)
    try:
        os.chmod(name, (path if path.exists() else source).lstat().st_mode & 0o7777)
        with os.fdopen(handle, "wb") as copy, \
                os.fdopen(open_regular(source, MAX_INDEX_BYTES), "rb") as original:
            shutil.copyfileobj(original, copy)
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


def staged_commit(git: GitRunner, index: Path, head: HeadState) -> str | None:
    """A commit of the user's staged state (their index), or None if it has conflicts."""
    try:
        tree = git.line("write-tree", index=index)
    except WorkspaceError:
        return None
    return commit_tree(git, git.object_directory, tree, [head.commit], "navtui: staged state")


def restore_user_index(
    git: GitRunner, user_index: Path, saved: Path, *, start: HeadState, staged: str | None,
    head: HeadState, head_moved: bool,
) -> None:
    """Put back the user's staged state (the `saved` copy of their index, else the `staged`
    commit) if HEAD is where it was at the session's `start`, else match the new HEAD."""
    if head == start and saved.exists():
        os.replace(_copy_beside(user_index, saved, "index.navtui-restore-"), user_index)
        git.run("update-index", "-q", "--refresh", ok_codes=(0, 1))
        return
    if head == start and staged:
        tree = staged + "^{tree}"
    elif head_moved:
        tree = (head.commit + "^{tree}") if head.commit else git.empty_tree
    else:
        return
    git.run("read-tree", "--reset", tree)
    git.run("update-index", "-q", "--refresh", ok_codes=(0, 1))


def _forget_converted_stats(git: GitRunner, index: Path, common_dir: Path,
                           listing: list[bytes]) -> int:
    """Drop the stat data of the regular files of `listing` (`ls-files -v -s` records) that the
    user's git converts when it adds them.

    The user's entry holds the converted blob (LF endings, a git-lfs pointer) with the stat of
    the file on disk, which holds other bytes (CRLF endings, the large file). navtui's private
    view converts nothing, and git trusts a matching stat without reading the file: checkpoint
    0 would hold the converted blob, and undo to it would write that blob (LF endings, the
    pointer's text) over the user's file. Without stat data git hashes those files once.
    """
    autocrlf, attributes_file = _user_conversion_settings(git)
    info_attributes = _found(common_dir / "info" / "attributes")
    tracked_attributes = any(record.endswith((b"\t.gitattributes", b"/.gitattributes"))
                             for record in listing)
    if not (autocrlf or tracked_attributes or _found(attributes_file) or info_attributes
            or (_found(Path("/etc/gitattributes")) and not os.environ.get("GIT_ATTR_NOSYSTEM"))):
        return 0
    regular: dict[bytes, bytes] = {}  # path -> "mode id", of stage-0 regular files
    for record in listing:
        meta, _, path = record.partition(b"\t")
        fields = meta.split(b" ")
        if len(fields) == 4 and fields[3] == b"0" and fields[1] in _REGULAR:
            regular[path] = fields[1] + b" " + fields[2]
    if not regular:
        return 0
    if "odd" in (info_attributes, _found(attributes_file)):
        converted = list(regular)  # (git could block reading such a file: every stat goes)
    else:
        converted = _converted_paths(git, list(regular), attributes_file, autocrlf)
    if converted:
        git.run("update-index", "-z", "--index-info", index=index,
                stdin=b"".join(regular[path] + b"\t" + path + b"\0" for path in converted))
    return len(converted)


def _user_conversion_settings(git: GitRunner) -> tuple[bool, Path]:
    """Whether the user's git converts line endings of every text file (`core.autocrlf`
    true or input), and their attributes file (`core.attributesFile`, else git's default).
    navtui's own commands override both; their values are read from the config files."""
    found = git.run("config", "-z", "--show-scope", "--get-regexp",
                    r"^core\.(autocrlf|attributesfile)$", ok_codes=(0, 1))
    values: dict[str, str] = {}
    fields = found.split(b"\0")
    for scope, pair in zip(fields[0::2], fields[1::2]):
        if scope != b"command":  # (navtui's own -c settings)
            key, _, value = os.fsdecode(pair).partition("\n")
            values[key] = value
    autocrlf = values.get("core.autocrlf", "false").lower() in ("true", "yes", "on", "1", "input")
    home = Path(os.environ.get("HOME", "/nonexistent"))
    default = Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "git" / "attributes"
    configured = values.get("core.attributesfile")
    return autocrlf, Path(os.path.expanduser(configured)) if configured else default


def _converted_paths(git: GitRunner, paths: list[bytes], attributes_file: Path,
                     autocrlf: bool) -> list[bytes]:
    """The `paths` whose attributes (as the user's git reads them) convert their content."""
    found = git.run("-c", f"core.attributesFile={attributes_file}", "check-attr", "-z", "--stdin",
                    *_CONVERSIONS, stdin=b"".join(path + b"\0" for path in paths))
    converting: set[bytes] = set()
    binary: set[bytes] = set()
    fields = found.split(b"\0")
    for path, name, value in zip(fields[0::3], fields[1::3], fields[2::3]):
        if value not in _OFF:
            converting.add(path)
        if name in (b"text", b"crlf") and value == b"unset":
            binary.add(path)
    return [path for path in paths
            if path in converting or (autocrlf and path not in binary)]


def _found(path: Path) -> str | None:
    """What git would read at `path`: "file" (a regular file with content), "odd" (a FIFO or a
    device, which a hostile repository can name: reading it could block or never end), or None
    (nothing to read)."""
    try:
        found = path.stat()
    except OSError:
        return None
    if stat.S_ISREG(found.st_mode):
        return "file" if found.st_size > 0 else None
    return None if stat.S_ISDIR(found.st_mode) else "odd"
