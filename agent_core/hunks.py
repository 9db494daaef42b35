"""Per-hunk review of an edit proposal: its change split into hunks, exactly the kept ones applied.

An edit (str_replace_editor create / str_replace / insert, the text dialect's `edit`, the XML
dialect's same functions) changes one region of one file. `Region` is that region before and
after, in whole lines; `split_hunks` cuts it into hunks (each run of changed lines, as `git add
-p` with no context would); `HunkChoice` is the user's word on one (keep, drop, or keep the user's
text instead); `kept_action` rebuilds the action from the kept hunks only, in the same vocabulary,
so the tool runs it and answers as it always does, and `hunk_note` is what the model reads after
that answer: which hunks ran, which were dropped, what the user changed.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent_core.actions import Action, Edit, StrReplaceEditor
from agent_core.executor.files import FileTools, ToolError
from agent_core.executor.paths import PathError
from agent_core.steps import HunkOutcome, KeepHunks, Verdict

# Lines of unchanged text shown around a hunk (display only: hunks are cut with none).
CONTEXT = 3


@dataclass(frozen=True)
class Region:
    """The lines an edit touches: `old` as the file has them, `new` as the edit leaves them;
    `first_line` is the file's line number of `old`'s first line (of the line after the
    insertion point when `old` is empty)."""

    path: str
    old: str
    new: str
    first_line: int


@dataclass(frozen=True)
class Hunk:
    """One run of changed lines: `old[at:end]` of the region becomes `new`."""

    number: int  # 1-based, in file order
    at: int  # index of the first old line in the region
    end: int
    old: tuple[str, ...]
    new: tuple[str, ...]
    old_line: int  # the file's line number of the first old line (of the line after, if none)
    new_line: int  # where the new lines start when every hunk is kept
    before: tuple[str, ...] = ()  # unchanged lines around it, for the eye
    after: tuple[str, ...] = ()

    @property
    def header(self) -> str:
        """`@@ -10,2 +10,3 @@` as a unified diff writes it (a side with no lines names the
        line before it)."""
        def side(line: int, count: int) -> str:
            return f"{line if count else line - 1},{count}"
        return f"@@ -{side(self.old_line, len(self.old))} +{side(self.new_line, len(self.new))} @@"

    @property
    def where(self) -> str:
        """The hunk's place in the file as it was, in words (`lines 10-11`, `after line 9`)."""
        count = len(self.old)
        if count == 0:
            return f"after line {self.old_line - 1}" if self.old_line > 1 else "at the start"
        last = self.old_line + count - 1
        return f"line {self.old_line}" if count == 1 else f"lines {self.old_line}-{last}"

    def diff_lines(self) -> list[str]:
        """The hunk as unified diff lines (header, context, `-` and `+` lines), no endings."""
        out = [self.header]
        out += [" " + line.rstrip("\r\n") for line in self.before]
        out += ["-" + line.rstrip("\r\n") for line in self.old]
        out += ["+" + line.rstrip("\r\n") for line in self.new]
        out += [" " + line.rstrip("\r\n") for line in self.after]
        return out


@dataclass(frozen=True)
class HunkChoice:
    """The user's word on a hunk: dropped (`keep` false), kept, or kept as `text` (edited)."""

    keep: bool = True
    text: str | None = None


KEEP, DROP = HunkChoice(), HunkChoice(keep=False)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def split_hunks(region: Region, context: int = CONTEXT) -> list[Hunk]:
    """The region's change as hunks, in order (none when nothing changes)."""
    old, new = _lines(region.old), _lines(region.new)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    hunks: list[Hunk] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        hunks.append(Hunk(
            number=len(hunks) + 1, at=i1, end=i2, old=tuple(old[i1:i2]), new=tuple(new[j1:j2]),
            old_line=region.first_line + i1, new_line=region.first_line + j1,
            before=tuple(old[max(0, i1 - context):i1]), after=tuple(old[i2:i2 + context]),
        ))
    return hunks


def _user_lines(hunk: Hunk, text: str) -> list[str]:
    """The user's text for a hunk as lines; a last line without a newline gets the one the
    hunk's own last line has."""
    lines = _lines(text)
    ending = hunk.new[-1][len(hunk.new[-1].rstrip("\r\n")):] if hunk.new else "\n"
    if lines and not lines[-1].endswith(("\n", "\r")) and ending:
        lines[-1] += ending
    return lines


def apply_hunks(region: Region, hunks: Sequence[Hunk], choices: Mapping[int, HunkChoice]) -> str:
    """The region's new text with only the kept hunks (by number; unnamed ones are kept), each
    as the user changed it where they did."""
    old = _lines(region.old)
    out: list[str] = []
    at = 0
    for hunk in hunks:
        choice = choices.get(hunk.number, KEEP)
        out += old[at:hunk.at]
        if not choice.keep:
            out += hunk.old
        elif choice.text is not None:
            out += _user_lines(hunk, choice.text)
        else:
            out += hunk.new
        at = hunk.end
    out += old[at:]
    return "".join(out)


def outcome(hunk: Hunk, choice: HunkChoice) -> HunkOutcome:
    """What became of `hunk`, as the log keeps it."""
    proposed = "".join(hunk.new)
    if not choice.keep:
        verdict, text = Verdict.DROPPED, None
    elif choice.text is not None and "".join(_user_lines(hunk, choice.text)) != proposed:
        verdict, text = Verdict.EDITED, "".join(_user_lines(hunk, choice.text))
    else:
        verdict, text = Verdict.KEPT, None
    return HunkOutcome(hunk.number, verdict, hunk.header, hunk.where, "".join(hunk.old), proposed, text)


class NothingKept(ValueError):
    """Every hunk was dropped (or edited back to the file as it is): there is nothing to run."""


def kept_action(action: Action, region: Region, hunks: Sequence[Hunk],
                choices: Mapping[int, HunkChoice]) -> KeepHunks:
    """The decision that runs only the kept hunks of `action` (an edit whose change is `region`):
    the action rebuilt from them, and each hunk's outcome. NothingKept when nothing would change."""
    text = apply_hunks(region, hunks, choices)
    if text == region.old and not (isinstance(action, StrReplaceEditor) and action.command == "create"):
        raise NothingKept("every hunk is dropped: nothing would change (reject the step instead)")
    outcomes = [outcome(hunk, choices.get(hunk.number, KEEP)) for hunk in hunks]
    return KeepHunks(_rebuilt(action, region, text), outcomes)


def _rebuilt(action: Action, region: Region, text: str) -> Action:
    """`action` changed to write `text` in place of its region's new text."""
    if isinstance(action, Edit):
        return dataclasses.replace(action, content=text)
    assert isinstance(action, StrReplaceEditor)
    if action.command == "create":
        return dataclasses.replace(action, file_text=text)
    if action.command == "insert":
        return dataclasses.replace(action, new_str=text)
    return dataclasses.replace(action, old_str=region.old, new_str=text)


def reviewable(action: Action) -> bool:
    """Whether `action` is an edit whose change can be reviewed hunk by hunk."""
    return isinstance(action, Edit) or (
        isinstance(action, StrReplaceEditor) and action.command in ("create", "str_replace", "insert"))


def region_of(action: Action, before: str | None, after: str | None) -> Region | None:
    """The region `action` changes, given the file's text before and after it (as the file
    tools plan it); None for an action that is not a reviewable edit."""
    if not isinstance(action, (Edit, StrReplaceEditor)) or not reviewable(action) or after is None:
        return None
    if isinstance(action, StrReplaceEditor) and action.command == "create":
        return Region(action.path, "", after, 1)
    before = before or ""
    if isinstance(action, StrReplaceEditor) and action.command == "str_replace":
        old_str, new_str = action.old_str or "", action.new_str or ""
        at = before.find(old_str)
        start = before.rfind("\n", 0, at) + 1
        stop = at + len(old_str) if old_str.endswith("\n") else before.find("\n", at + len(old_str))
        stop = len(before) if stop < 0 else stop + (not old_str.endswith("\n"))
        new = before[start:at] + new_str + before[at + len(old_str):stop]
        return Region(action.path, before[start:stop], new, before.count("\n", 0, start) + 1)
    old_lines, new_lines = _lines(before), _lines(after)
    start, end = ((action.insert_line or 0) + 1, action.insert_line or 0) if isinstance(
        action, StrReplaceEditor) else (action.start, action.end)
    tail = len(old_lines) - end
    new = "".join(new_lines[start - 1:len(new_lines) - tail])
    if isinstance(action, StrReplaceEditor):  # insert: what it puts in, as the model wrote it
        new = action.new_str or ""
    return Region(action.path, "".join(old_lines[start - 1:end]), new, start)


def review_summary(outcomes: Sequence[HunkOutcome]) -> str:
    """A review in a few words, for the user: `1 of 2 hunks kept (1 changed by you)`."""
    kept = sum(o.verdict is not Verdict.DROPPED for o in outcomes)
    edited = sum(o.verdict is Verdict.EDITED for o in outcomes)
    return f"{kept} of {len(outcomes)} hunks kept" + (f" ({edited} changed by you)" if edited else "")


def _numbers(outcomes: Sequence[HunkOutcome]) -> str:
    names = [f"hunk {o.number} ({o.where})" for o in outcomes]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def hunk_note(path: str, outcomes: Sequence[HunkOutcome]) -> str:
    """What the model reads after the tool's answer: which hunks of its edit of `path` were
    applied, which dropped, and the user's own text for those the user changed."""
    applied = [o for o in outcomes if o.verdict is not Verdict.DROPPED]
    dropped = [o for o in outcomes if o.verdict is Verdict.DROPPED]
    edited = [o for o in outcomes if o.verdict is Verdict.EDITED]
    lines = [f"(The user reviewed your edit of {path} hunk by hunk: {len(applied)} of its "
             f"{len(outcomes)} hunks were applied.)"]
    if applied:
        lines.append(f"Applied: {_numbers(applied)}.")
    if dropped:
        lines.append(f"Dropped: {_numbers(dropped)}; those lines stay as they were.")
    for o in edited:
        lines.append(f"The user changed hunk {o.number} ({o.where}) before applying it; it now reads:")
        lines.append((o.text or "").rstrip("\n") or "(nothing: the lines were removed)")
    return "\n".join(lines)


@dataclass(frozen=True)
class HunkReview:
    """A proposed edit ready for review: its region and hunks, and the decision they lead to."""

    action: Action
    region: Region
    hunks: tuple[Hunk, ...]

    def decision(self, choices: Mapping[int, HunkChoice]) -> KeepHunks:
        """The decision that runs the hunks as `choices` say (NothingKept when none is kept)."""
        return kept_action(self.action, self.region, self.hunks, choices)


def review_of(files: FileTools, action: Action) -> HunkReview | None:
    """The hunks of `action` as it would change the repository now, or None when it is not a
    reviewable edit or would fail (the tool's answer then says why)."""
    if not reviewable(action):
        return None
    try:
        change = files.plan(action)  # type: ignore[arg-type]
    except (ToolError, PathError):
        return None
    region = region_of(action, change.before, change.after)
    if region is None:
        return None
    return HunkReview(action, region, tuple(split_hunks(region)))
