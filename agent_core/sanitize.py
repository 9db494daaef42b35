"""Text made safe to show on a terminal: every control character visible, nothing executable.

Model output, commands, command output, file names and diffs are hostile input: an escape
sequence in them could move the cursor and repaint a line (so the user approves something other
than what runs), set the clipboard (OSC 52) or retitle the window. `visible` turns every control
character except newline and tab into a printable stand-in, so what the user reads is what is
there:

* C0 controls and DEL become their Unicode "control pictures" (`\\x1b` → `␛`, `\\x07` → `␇`,
  `\\x7f` → `␡`); a carriage return right before a newline is dropped (CRLF text reads as lines);
* C1 controls (`\\x80`–`\\x9f`, e.g. the one-byte CSI `\\x9b`) become `⟨U+009B⟩`;
* invisible and format characters become `⟨U+200B⟩`: every character of Unicode category Cf
  (format: bidi embeddings/overrides/isolates/marks as in Trojan Source spoofing, zero-width
  space/joiners, word joiner, BOM, soft hyphen, tag characters, …), the whole tag block
  U+E0000–U+E007F, the line and paragraph separators U+2028/U+2029 and the fillers that draw
  nothing (U+034F combining grapheme joiner, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0,
  the Khmer inherent vowels U+17B4/U+17B5) — so `setup.py⟨U+200B⟩` no longer reads as
  `setup.py`;
* lone surrogates — the undecodable bytes of a non-UTF-8 file name or output, carried as
  `surrogateescape` — become `\\xNN` for the byte they stand for (others `⟨U+D83D⟩`), so the
  text can always be encoded for the terminal.

Used by every front end (headless transcript, `--plain`, the TUI's widgets) at the point text
enters them; the core keeps the exact text.
"""

from __future__ import annotations

import re
import unicodedata

_CONTROL_PICTURES = 0x2400
_DEL_PICTURE = "\u2421"
# Characters that draw nothing but are no format characters (not category Cf).
_FILLERS = "\u034f\u115f\u1160\u17b4\u17b5\u2028\u2029\u3164\uffa0\U000e0000-\U000e007f"


def _format_characters() -> str:
    """Every category Cf character this Python's Unicode database knows, as a regex class body
    (Cf lies only in planes 0 and 1 and the tag block, so only those are scanned)."""
    found = [chr(code) for codes in (range(0x20000), range(0xE0000, 0xE1000)) for code in codes
             if unicodedata.category(chr(code)) == "Cf"]
    return "".join(re.escape(char) for char in found)


INVISIBLE = _format_characters() + _FILLERS
_UNSAFE = re.compile("\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f" + INVISIBLE + "\ud800-\udfff]")


def _stand_in(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r\n":
        return "\n"
    code = ord(char)
    if code < 0x20:
        return chr(_CONTROL_PICTURES + code)
    if code == 0x7F:
        return _DEL_PICTURE
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"⟨U+{code:04X}⟩"


def visible(text: str) -> str:
    """`text` with every control character except `\\n` and `\\t` made visible (see module doc)."""
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(_stand_in, text)


# What `json.dumps(..., ensure_ascii=False)` leaves raw but a terminal or a UTF-8 file cannot
# take: DEL, C1 controls, bidi controls and the other invisible characters above (line and
# paragraph separators included) and lone surrogates.
_JSON_UNSAFE = re.compile("[\x7f-\x9f" + INVISIBLE + "\ud800-\udfff]")


def json_safe(encoded: str) -> str:
    """JSON text (from `json.dumps(..., ensure_ascii=False)`) with the characters above written
    as `\\uXXXX` escapes: the same JSON value, always valid UTF-8, no raw control characters.

    A lone surrogate (an undecodable byte kept by `surrogateescape`) reads back as itself."""
    if encoded.isascii() and "\x7f" not in encoded:  # the usual line, without the search
        return encoded
    if not _JSON_UNSAFE.search(encoded):
        return encoded
    return _JSON_UNSAFE.sub(lambda m: _json_escape(ord(m.group())), encoded)


def _json_escape(code: int) -> str:
    """`\\uXXXX`, or the surrogate pair JSON writes a character past U+FFFF as."""
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


# Escape sequences a terminal acts on: CSI (`ESC [` or the one-byte `\x9b`, parameters, one final
# byte), OSC/DCS/APC/PM/SOS strings (up to BEL or ST) and two-byte `ESC x` sequences.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]P_^X]|[\x90\x9d\x9e\x9f\x98])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]"
)
_OTHER_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain_copy(text: str) -> str:
    """`text` as plain text to paste elsewhere: escape sequences removed, each line as a terminal
    leaves it after carriage returns (`50%\\r100%` -> `100%`), other control characters dropped;
    newlines and tabs kept."""
    text = _ESCAPES.sub("", text).replace("\r\n", "\n")
    if "\r" in text:
        text = "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n"))
    return _OTHER_CONTROLS.sub("", text)
