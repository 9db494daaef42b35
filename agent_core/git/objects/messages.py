"""The message of a checkpoint commit: the commits it names besides its tree (HEAD, branch, the
user's staged state, ignored files, git's control files, nested work trees, quarantined files,
the `.git` entries the model made),
one `key: value` line each; `-` for none."""

from __future__ import annotations

from agent_core.git.checkpoints.head import HeadState

_MISSING = "-"


def checkpoint_message(
    head: HeadState, staged: str | None, ignored: str | None, control: str | None,
    nested: str | None, quarantined: str | None = None, made: str | None = None,
) -> str:
    return (
        "navtui checkpoint\n\n"
        f"head: {head.commit or _MISSING}\n"
        f"branch: {head.branch or _MISSING}\n"
        f"staged: {staged or _MISSING}\n"
        f"ignored: {ignored or _MISSING}\n"
        f"control: {control or _MISSING}\n"
        f"nested: {nested or _MISSING}\n"
        + (f"quarantined: {quarantined}\n" if quarantined else "")
        + (f"made: {made}\n" if made else "")
    )


def parse_message(message: str) -> dict[str, str | None]:
    fields: dict[str, str | None] = {}
    for line in message.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            fields[key] = None if value == _MISSING else value
    return fields
