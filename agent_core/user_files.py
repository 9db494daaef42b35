"""Files a user names (an issue, a replay script, a profile, an instances file, the config):
read as UTF-8, and when one cannot be read, one line that says why and what to do."""

from __future__ import annotations

import errno
import shlex
from pathlib import Path


def read_user_text(path: Path, what: str, error_type: type[Exception]) -> str:
    """The text of `path`, else `error_type("cannot read WHAT: why; what to do")`. `what`
    names the file as the user gave it (`--issue-file ISSUE.md`)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise error_type(f"cannot read {what}: {why_unreadable(path, error)}") from None


def why_unreadable(path: Path | str, error: OSError | UnicodeDecodeError) -> str:
    """Why `path` could not be read as text, and the fix: `not UTF-8 text (byte 0xff at
    offset 4); save it as UTF-8, e.g. ...`."""
    if isinstance(error, UnicodeDecodeError):
        byte = error.object[error.start]
        return (f"not UTF-8 text (byte 0x{byte:02x} at offset {error.start}); save it as UTF-8, "
                f"e.g. `iconv -f latin1 -t utf-8 {shlex.quote(str(path))} > {shlex.quote(f'{path}.utf8')}`")
    if isinstance(error, IsADirectoryError) or error.errno == errno.EISDIR:
        return "it is a directory; give the path of a file"
    if isinstance(error, FileNotFoundError):
        return "no such file; check the path"
    if isinstance(error, PermissionError):
        return "permission denied; check its permissions"
    return str(error.strerror or error)
