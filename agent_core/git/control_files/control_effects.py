"""What a change to one of git's control files would do the next time the user runs git, and
whether it plants code: a file that makes git run a program or read another config or object
store (a hook, `commondir`, alternates, an fsmonitor/filter/pager/include setting)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_core.git.control_files.config_read import runs_nothing

# Settings whose value git runs (or that make it read more config): key pattern -> when it runs.
_RUNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), when) for pattern, when in (
        (r"core\.fsmonitor", "runs on your next `git status` (and every command that reads the index)"),
        (r"core\.hookspath", "chooses the hooks your next `git commit` runs"),
        (r"(core\.pager|pager\..+)", "runs on your next `git log` / `git diff` in a terminal"),
        (r"(core\.editor|sequence\.editor)", "runs on your next `git commit` without -m"),
        (r"(core\.sshcommand|core\.gitproxy|core\.askpass|credential\..*helper)",
         "runs on your next `git fetch` / `git push`"),
        (r"filter\..+\.(clean|smudge|process)",
         "runs on your next `git status` / `git add` / `git checkout`"),
        (r"(diff\..+\.(textconv|command)|diff\.external)", "runs on your next `git diff` / `git log -p`"),
        (r"merge\..+\.driver", "runs on your next `git merge` / `git pull`"),
        (r"(include\.path|includeif\..+\.path)",
         "makes every git command here read another config file"),
        (r"gpg\.(.+\.)?program", "runs on your next signed commit or tag"),
        (r"core\.alternaterefscommand", "runs on your next `git push` / `git fetch`"),
        (r"(uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack|vcs))",
         "runs on your next `git fetch` / `git push`"),
        (r"alias\..+", "runs when you type the alias (a `!` alias is a shell command)"),
    )
)

_WORKTREE = re.compile(r"core\.worktree", re.IGNORECASE)

_HOOK_COMMANDS = {
    "pre-commit": "`git commit`", "prepare-commit-msg": "`git commit`",
    "commit-msg": "`git commit`", "post-commit": "`git commit`",
    "pre-merge-commit": "`git merge`", "post-merge": "`git merge` / `git pull`",
    "pre-push": "`git push`", "pre-rebase": "`git rebase`", "post-rewrite": "`git rebase` / `git commit --amend`",
    "post-checkout": "`git checkout` / `git switch` / `git clone`", "pre-auto-gc": "`git gc --auto`",
    "reference-transaction": "git command that moves a branch or tag",
    "post-index-change": "`git status` / `git add`", "fsmonitor-watchman": "`git status` (when core.fsmonitor names it)",
    "applypatch-msg": "`git am`", "pre-applypatch": "`git am`", "post-applypatch": "`git am`",
    "push-to-checkout": "push into this repository", "sendemail-validate": "`git send-email`",
}


@dataclass(frozen=True)
class Effect:
    """What one changed control file does: `what` in words, `planted` when it brings code or
    another config into the user's next git command (such a file is quarantined)."""

    what: str
    planted: bool


def hook_command(name: str) -> str:
    """The git command after which hook `name` runs."""
    return _HOOK_COMMANDS.get(name, "git command that runs this hook")


def hook_effect(name: str) -> str:
    return f"a hook: runs on your next {hook_command(name)}"


def config_effect(added: list[str]) -> Effect:
    """The effect of the settings `added` to a config (`key = value` lines as git lists them,
    new or changed): planted unless every key is one that runs nothing (`runs_nothing`)."""
    runs = []
    for line in added:
        key = line.split(" = ", 1)[0]
        if runs_nothing(key):
            continue
        when = next((when for pattern, when in _RUNS if pattern.fullmatch(key)), None)
        runs.append(f"{key} {when or 'is no setting navtui knows to run nothing'}")
    if runs:
        return Effect("; ".join(runs[:4]), planted=True)
    if any(_WORKTREE.fullmatch(line.split(" = ", 1)[0]) for line in added):
        # What `git submodule update --init` writes into a new submodule's config.
        return Effect("core.worktree points git at another working tree", planted=False)
    return Effect("settings your next git commands read", planted=False)


def file_effect(path: str, what: str, is_hook: bool, runnable: bool) -> Effect:
    """The effect of a control file (relative to the git dir) that was added, changed or
    removed, when it is not a config (those are read setting by setting: `config_effect`);
    `runnable`: it is now executable or a symlink (git runs only such hooks)."""
    name = path.rsplit("/", 1)[-1]
    if what == "removed":
        if is_hook:
            return Effect(f"a hook taken away: your next {hook_command(name)} no longer runs it",
                          planted=False)
        return Effect("removed", planted=False)
    if name == "commondir":
        return Effect("makes every git command here (your next `git status`, `git commit`) read "
                      "config, hooks and refs from another directory", planted=True)
    if path.endswith("objects/info/alternates"):
        return Effect("makes git read objects from other directories on your next `git status`, "
                      "`git log`, ...", planted=True)
    if is_hook:
        if not runnable:
            return Effect(f"a hook that is not executable: git skips it on your next "
                          f"{hook_command(name)}", planted=False)
        return Effect(hook_effect(name), planted=True)
    if name == "attributes":
        return Effect("changes which filters and diff drivers your next `git add` / `git diff` use",
                      planted=False)
    if name == "gitdir":
        return Effect("points a linked worktree elsewhere", planted=False)
    return Effect("read by your next git commands", planted=False)
