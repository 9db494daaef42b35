"""Where API keys come from, and how to keep them out of URLs, logs and transcripts."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit, urlunsplit

API_KEY_ENV_VARS = ("NAVTUI_API_KEY", "OPENAI_API_KEY")


def split_credentials(url: str) -> tuple[str, str | None]:
    """`url` without its `user:password@` part, and the API key that part carries: the password,
    or the user name when there is no password (None without credentials).

    The key goes out as the Bearer token, never in the URL (httpx would send URL credentials as
    Basic auth, which OpenAI-compatible servers refuse), and the URL shown anywhere has none."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # not a URL at all: `check_base_url` says so
        return url, None
    if "@" not in parts.netloc:
        return url, None
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, _, password = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=host)), unquote(password or user) or None


def check_base_url(url: str) -> str | None:
    """Why `url` cannot be a server's address (None when it can): one line with the fix."""
    example = "e.g. http://localhost:8000/v1"
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (a port out of range raises here)
    except ValueError as error:
        return f"--base-url {url!r} is not a URL ({error}); {example}"
    if parts.scheme not in ("http", "https"):
        return f"--base-url must start with http:// or https://, got {url!r}; {example}"
    if not parts.hostname or any(c.isspace() for c in url.strip()):
        return f"--base-url {url!r} names no host; {example}"
    return None


def secret_values(api_key: str | None, base_url: str | None) -> list[str]:
    """Every configured credential: the key given, the keys in the environment (whichever one
    is used: the model's shell can print them all) and a URL's key. Logs and transcripts
    redact each wherever it appears."""
    values = [api_key, *(os.environ.get(name) for name in API_KEY_ENV_VARS)]
    if base_url:
        values.append(split_credentials(base_url)[1])
    return [v for v in dict.fromkeys(values) if v]
