"""What the session log keeps out: secrets, and the middle of huge strings.

Each works on the JSON form of an event (`agent_core.event_codec`), walking it once with
`map_json`: `scrub` blanks string values under keys that name a credential, `redact` replaces
literal secrets and URL passwords in every string, `cap_strings` cuts long strings to head and
tail around a marker with their length and SHA-256 (`was_cut` finds it again); `for_log` does
all three in one walk.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Iterable
from typing import Any

from agent_core.event_codec import event_from_dict, event_to_dict
from agent_core.events import Event, TokenStreamed

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 4
CUT_MARKER = (
    "\n[... navtui log: {cut} of {size} characters not logged (sha256 {digest} of the whole "
    "text); the files themselves are in the step's checkpoint ...]\n"
)
_CUT = re.compile(r"\n\[\.\.\. navtui log: \d+ of \d+ characters not logged \(sha256 [0-9a-f]{64} ")
_SECRET_KEYS = frozenset({"apikey", "token", "secret", "password", "authorization", "cookie"})
_SECRET_SUFFIXES = ("api_key", "_token", "_secret", "_password")
# The password of a URL like https://user:password@host/...
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][\w+.-]*://[^/\s:@]+:)[^@\s/]+@")


def map_json(
    value: Any,
    string: Callable[[str], str] = lambda text: text,
    entry: Callable[[object, Any], Any] | None = None,
) -> Any:
    """`value` (a JSON value: dicts, lists, strings, numbers) with `string` applied to every
    string in it; `entry(key, value)`, when given, replaces a dict's value outright where it
    returns anything but `value` itself (then that value is not walked further)."""
    if isinstance(value, str):
        return string(value)
    if isinstance(value, dict):
        walked = {}
        for key, item in value.items():
            replaced = item if entry is None else entry(key, item)
            walked[key] = map_json(item, string, entry) if replaced is item else replaced
        return walked
    if isinstance(value, list):
        return [map_json(item, string, entry) for item in value]
    return value


def scrub(value: Any) -> Any:
    """`value` with every credential-named key's value replaced by REDACTED (recursively)."""
    return map_json(value, entry=_blank)


def redact(value: Any, secrets: Iterable[str] = ()) -> Any:
    """`value` with every literal secret and every URL password replaced by REDACTED in each
    string it holds (recursively), so no JSON escaping can hide one from the replacement.

    Secrets shorter than MIN_SECRET_LENGTH are left alone: replacing e.g. "1" everywhere would
    wreck the text, and a value that short protects nothing."""
    return map_json(value, _cleaner(secrets))


def cap_strings(value: Any, limit: int) -> Any:
    """`value` with every string longer than `limit` characters cut to its head and tail around
    a CUT_MARKER line that gives the full length and the SHA-256 of the whole (UTF-8) text."""
    return map_json(value, _capper(limit))


def for_log(value: Any, secrets: Iterable[str] = (), limit: int | None = None) -> Any:
    """`cap_strings(redact(scrub(value), secrets), limit)` (no cap for None), in one walk."""
    clean = _cleaner(secrets)
    if limit is None:
        return map_json(value, clean, _blank)
    cap = _capper(limit)
    return map_json(value, lambda text: cap(clean(text)), _blank)


def _blank(key: object, item: Any) -> Any:
    return REDACTED if _is_secret_key(key) and isinstance(item, str) and item else item


def _cleaner(secrets: Iterable[str]) -> Callable[[str], str]:
    replaced = [secret for secret in secrets if len(secret) >= MIN_SECRET_LENGTH]

    def clean(text: str) -> str:
        for secret in replaced:
            text = text.replace(secret, REDACTED)
        return _URL_PASSWORD.sub(rf"\g<1>{REDACTED}@", text) if "://" in text else text

    return clean


def _capper(limit: int) -> Callable[[str], str]:
    def cap(text: str) -> str:
        if len(text) <= limit:
            return text
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        half = limit // 2
        marker = CUT_MARKER.format(cut=len(text) - 2 * half, size=len(text), digest=digest)
        return text[:half] + marker + text[len(text) - half :]

    return cap


def was_cut(text: str) -> bool:
    """Whether `text`, read from a log, lost its middle to `cap_strings`."""
    return _CUT.search(text) is not None


def redact_event(event: Event, secrets: Iterable[str] = ()) -> Event:
    """`event` with `redact` applied to every string it carries (the event itself where that
    changes nothing)."""
    if isinstance(event, TokenStreamed):
        return TokenStreamed(event.index, redact(event.text, secrets))
    data = event_to_dict(event)
    redacted = redact(data, secrets)
    return event if redacted == data else event_from_dict(redacted)


@functools.lru_cache(maxsize=1024)  # a log's keys are few, and asked for on every line
def _is_secret_key(key: object) -> bool:
    name = str(key).lower().replace("-", "_")
    return name in _SECRET_KEYS or name.endswith(_SECRET_SUFFIXES)
