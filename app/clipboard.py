"""Copy text out of navtui: into the terminal's clipboard with OSC 52 (which travels through
SSH, and through tmux when its `set-clipboard` is on), or into a file when the terminal cannot
take it or the config file's `[clipboard] method` says so.

OSC 52 has no answer: a terminal that ignores it says nothing. So `auto` sends it only where it
can arrive: a terminal that names itself (TERM set, not `dumb` or the Linux console), not macOS
Terminal (which ignores it), inside tmux only with `set-clipboard on` (tmux's default,
`external`, drops what applications send), and text short enough for the terminals that cap the
sequence. Inside tmux otherwise, the text goes straight into tmux's paste buffer
(`tmux load-buffer -w`, which also hands it to the terminal's clipboard where tmux can).
Everywhere else it goes to `copied.txt` in navtui's state directory, and the confirmation says
where and why.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_core.sanitize import plain_copy

if TYPE_CHECKING:
    from textual.screen import Screen

METHODS = ("auto", "osc52", "file")
# Base64 bytes past which some terminals drop an OSC 52 sequence (hterm and others cap it at
# 100,000): longer text goes to the file.
OSC52_LIMIT = 100_000
FILE_NAME = "copied.txt"
NO_CLIPBOARD_TERMS = frozenset({"", "dumb", "linux"})


@dataclass(frozen=True)
class Copied:
    """What a copy did: `chars` characters of `what` to the clipboard, or to `path` because of
    `why_file`; `error` when neither worked."""

    what: str
    chars: int
    path: Path | None = None
    why_file: str = ""
    error: str = ""
    tmux_buffer: bool = False  # put in tmux's paste buffer by `tmux load-buffer`

    def message(self) -> str:
        """The short confirmation shown after the copy."""
        if self.error:
            return f"Could not copy {self.what}: {self.error}"
        if self.tmux_buffer:
            return f"Copied {self.what} ({self.chars} characters) to tmux's paste buffer"
        if self.path is None:
            return f"Copied {self.what} ({self.chars} characters) to the clipboard"
        return f"Copied {self.what} to {self.path} ({self.why_file})"


def osc52(text: str) -> str:
    """The escape sequence that puts `text` in the terminal's clipboard."""
    return f"\x1b]52;c;{base64.b64encode(text.encode('utf-8')).decode('ascii')}\a"


def tmux_set_clipboard() -> str:
    """The tmux server's `set-clipboard` (of `$TMUX`'s server), or "" if tmux does not say."""
    try:
        result = subprocess.run(["tmux", "show-options", "-sv", "set-clipboard"],
                                capture_output=True, text=True, timeout=2, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""


def tmux_load_buffer(text: str) -> bool:
    """Put `text` in `$TMUX`'s paste buffer, and through tmux in the terminal's clipboard where
    tmux can set it (`load-buffer -w`); False when tmux does not take it."""
    try:
        result = subprocess.run(["tmux", "load-buffer", "-w", "-"], input=text.encode("utf-8"),
                                capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0


def terminal_refusal(
    text: str, env: Mapping[str, str], tmux_setting: Callable[[], str] = tmux_set_clipboard
) -> str:
    """Why the terminal cannot take `text` through OSC 52; "" when it can."""
    term = env.get("TERM", "")
    if term in NO_CLIPBOARD_TERMS:
        return f"the terminal (TERM={term or 'unset'}) has no clipboard escape"
    if env.get("TERM_PROGRAM") == "Apple_Terminal":
        return "macOS Terminal ignores the clipboard escape (OSC 52)"
    if env.get("TMUX"):
        setting = tmux_setting()
        if setting != "on":
            return (f"tmux's set-clipboard is {setting or 'unknown'}; "
                    "`tmux set -g set-clipboard on` lets navtui copy through tmux")
    size = len(osc52(text))
    if size > OSC52_LIMIT:
        return f"{size:,} bytes are too many for the terminal's clipboard escape"
    return ""


def fallback_path() -> Path:
    """`copied.txt` in navtui's state directory (platformdirs' user state dir)."""
    import platformdirs

    return platformdirs.user_state_path("navtui") / FILE_NAME


def copy_text(
    text: str, what: str, method: str, send: Callable[[str], None],
    env: Mapping[str, str] | None = None,
) -> Copied:
    """Copy `text` as plain text (escape sequences stripped): `send` it through OSC 52
    (`App.copy_to_clipboard`) unless `method` or the terminal rules that out, else write it to
    `fallback_path()`."""
    # (undecodable bytes of an output, kept as lone surrogates, become U+FFFD: UTF-8 can hold it)
    text = plain_copy(text).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if method == "file":
        why = 'the config\'s [clipboard] method is "file"'
    elif method == "osc52":
        why = ""
    else:
        why = terminal_refusal(text, os.environ if env is None else env)
    if not why:
        send(text)
        return Copied(what, len(text))
    if method == "auto" and (os.environ if env is None else env).get("TMUX") and tmux_load_buffer(text):
        return Copied(what, len(text), tmux_buffer=True)
    path = fallback_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        return Copied(what, len(text), error=f"{why}, and {path} cannot be written ({error.strerror or error})")
    return Copied(what, len(text), path, why)


def copy_and_say(screen: Screen, target: tuple[str, str] | None) -> None:
    """Copy `target` (what, text) as the app's `[clipboard] method` says, and say so."""
    if target is None:
        screen.notify("Nothing to copy here", timeout=3)
        return
    what, text = target
    method = getattr(screen.app, "clipboard_method", "auto")
    copied: Copied = copy_text(text, what, method, screen.app.copy_to_clipboard)
    screen.notify(copied.message(), severity="error" if copied.error else "information",
                  timeout=6 if copied.path or copied.error else 3)
