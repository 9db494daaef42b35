"""A git config file read as git reads it, and judged by what its settings may do.

A parser of navtui's own would read what git reads differently (`[core] fsmonitor = x` on one
line, continuation lines, quoting): git itself lists the settings (`git config --file F --null
--list --no-includes`, with the system and global configs off). A setting runs nothing only
when its key is on `_RUNS_NOTHING`; every other one is taken to run code or read other files.
"""

from __future__ import annotations

import os
import re
import tempfile

from agent_core.git.process import deadline
from agent_core.git.errors import WorkspaceError

_SUB = r"\..+\."  # a section's subsection (any text, dots included)
# Keys (as git lists them: section and name lower-case) that make git run nothing and read no
# other file or program: what `git init`, `clone`, `remote add`, `branch -u`, `submodule init`,
# `sparse-checkout` and everyday `git config` write.
_RUNS_NOTHING = re.compile("|".join((
    r"core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|"
    r"precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath|compression|loosecompression|"
    r"bigfilethreshold|sparsecheckout|sparsecheckoutcone|splitindex|untrackedcache|"
    r"preloadindex|checkstat|trustctime|abbrev|commentchar|commentstring|whitespace|worktree|"
    r"sharedrepository|warnambiguousrefs|multipackindex|commitgraph|fsync|fsyncmethod)",
    r"(user|author|committer)\.(name|email)",
    rf"remote{_SUB}(url|pushurl|fetch|push|tagopt|prune|prunetags|mirror|skipdefaultupdate|"
    r"skipfetchall)",
    rf"branch{_SUB}(remote|merge|rebase|pushremote|description)",
    rf"submodule{_SUB}(url|active|branch|ignore|fetchrecursesubmodules|shallow)",
    r"extensions\.(objectformat|worktreeconfig|refstorage|preciousobjects)",
    r"init\.defaultbranch", r"pull\.(rebase|ff)", r"push\.(default|autosetupremote|followtags)",
    r"fetch\.(prune|prunetags|writecommitgraph)", r"merge\.(ff|conflictstyle)",
    r"rebase\.(autosquash|autostash|updaterefs)",
    r"diff\.(renames|algorithm|mnemonicprefix|noprefix|context|colormoved)",
    r"status\.(showuntrackedfiles|short|branch|relativepaths)",
    r"color\.[a-z.]+", r"advice\.[a-z]+", r"i18n\.[a-z]+",
    r"gc\.(auto|autopacklimit|autodetach|reflogexpire|reflogexpireunreachable|pruneexpire)",
    r"maintenance\.(auto|strategy)", r"index\.(version|sparse|threads|skiphash)",
    r"feature\.(manyfiles|experimental)", r"rerere\.(enabled|autoupdate)",
    r"log\.(date|decorate|follow|abbrevcommit)", r"lfs\.repositoryformatversion",
)), re.IGNORECASE)


def runs_nothing(key: str) -> bool:
    """Whether setting `key` is one git only reads as a value (see `_RUNS_NOTHING`)."""
    return _RUNS_NOTHING.fullmatch(key) is not None


def settings(data: bytes) -> list[str] | None:
    """`key = value` for each setting of the config file `data`, as git lists them (a key
    without a value: `key = `); None when git cannot read it."""
    with tempfile.TemporaryDirectory(prefix="navtui-config-") as folder:
        path = os.path.join(folder, "config")
        with open(path, "wb") as handle:
            handle.write(data)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": folder,
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}
        try:
            done = deadline.run(["git", "config", "--file", path, "--no-includes", "--null",
                                 "--list"], cwd=folder, env=env)
        except WorkspaceError:
            return None
    if done.returncode:
        return None
    found = []
    for entry in done.stdout.split(b"\0"):
        if entry:
            key, _, value = entry.decode("utf-8", "surrogateescape").partition("\n")
            found.append(f"{key} = {value}")
    return found
