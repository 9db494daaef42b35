"""One request of the openai backend, sent and read in a reader thread (`stream_pump`).

`send(wire, path, body)` is the reader's source: it takes a slot of the server's shared
`ServerBackoff`, sends the request, waits out 429/503 and restarts (yielding a `Waiting` for
each wait), then yields the reply's SSE events, read with bounded memory (`stream_lines`). Every
fault of the reply raises a `faults` error: a refused context (`ContextTooLong`), a broken or
damaged stream (`StreamDropped` and its kinds), a server busy past the deadline
(`ServerUnavailable`); a setup problem (no server ever reached, a 401, a 404) raises
`BackendError`. The slot is given back when the reply ends, however it ends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from agent_core.backends.backoff import ServerBackoff
from agent_core.backends.base import BackendError
from agent_core.backends.credentials import API_KEY_ENV_VARS
from agent_core.backends.faults import (
    ContextTooLong,
    ServerUnavailable,
    StreamDropped,
    StreamStalled,
    context_too_long,
)
from agent_core.backends.openai_http import reason, retry_after, server_hint, server_message
from agent_core.backends.sse import SSEEvent, iter_sse_events
from agent_core.backends.stream_lines import bounded_lines
from agent_core.events import Waiting

RETRY_STATUSES = frozenset({429, 503})
CONTEXT_STATUSES = frozenset({400, 413, 422})
CONNECT_RETRIES = 2
# A wait for a free slot is said once it has lasted this long, then every WAIT_EVERY seconds.
SLOT_WAIT_SAID = 1.0
WAIT_EVERY = 5.0


class Cancelled(Exception):
    """cancel() was called while waiting to (re)send the request."""


@dataclass
class Wire:
    """What one backend's requests share: its client, server, backoff and cancel flag."""

    client: httpx.Client
    base_url: str
    model: str
    busy: ServerBackoff
    cancelled: threading.Event
    backoff: float
    max_retries: int | None
    scrub: Callable[[str], str]
    timeout: float  # --request-timeout (the consumer's bound; the socket's is a little longer)
    reached: bool = False  # the server answered once: a refused connection is a restart
    response: httpx.Response | None = None
    holding: bool = False  # a reply holds a slot of `busy` until `give_back`
    lock: threading.Lock = field(default_factory=threading.Lock)

    def give_back(self, succeeded: bool) -> None:
        """Return the reply's slot (once: the reader and the consumer may both call this)."""
        with self.lock:
            holding, self.holding = self.holding, False
        if holding:
            self.busy.release(succeeded)

    def sleep(self, seconds: float) -> None:
        if self.cancelled.wait(seconds):
            raise Cancelled


def send(wire: Wire, path: str, body: dict[str, Any],
         headers: dict[str, str] | None = None) -> Iterator[Waiting | SSEEvent]:
    """See the module docstring."""
    response = yield from _open(wire, path, body, headers or {})
    with wire.lock:
        wire.holding = True
    ended = False
    try:
        lines = bounded_lines(response.iter_raw(), response.headers.get("content-encoding", ""))
        for event in iter_sse_events(lines):
            if wire.cancelled.is_set():
                return
            yield event
        ended = True
    except httpx.TimeoutException:
        if not wire.cancelled.is_set():
            raise _stalled(wire) from None
    except (httpx.TransportError, httpx.StreamError) as exc:
        if not wire.cancelled.is_set():
            raise StreamDropped(wire.scrub(
                f"connection to {wire.base_url} broke mid-stream ({reason(exc)}); "
                "check the server's log (crashed or restarted?)"
            )) from None
    finally:
        with wire.lock:
            wire.response = None
        response.close()
        wire.give_back(ended)


def _open(wire: Wire, path: str, body: dict[str, Any],
          headers: dict[str, str]) -> Generator[Waiting, None, httpx.Response]:
    """Send the request (generator: yields its waits, returns the response). 429/503 wait until
    the total deadline (then `ServerUnavailable`); so do refused connections once the server has
    answered before (it is restarting), while a server never reached is retried a few times
    only."""
    url = wire.base_url + path
    refused = busy_retries = 0
    busy_since: float | None = None
    while True:
        yield from _take_slot(wire, busy_since)
        try:
            response = wire.client.send(
                wire.client.build_request("POST", url, json=body, headers=headers), stream=True
            )
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            if wire.cancelled.is_set():
                wire.busy.release(False)
                raise Cancelled from None
            if wire.reached:
                now = time.monotonic()
                busy_since = busy_since if busy_since is not None else now
                pause = wire.busy.unreachable(busy_retries)
                if now - busy_since < wire.busy.deadline:
                    busy_retries += 1
                    yield Waiting(f"{wire.base_url} refuses connections (restarting?)",
                                  now - busy_since, pause)
                    continue
                raise ServerUnavailable(wire.scrub(
                    f"{wire.base_url} stopped accepting connections ({reason(exc)}) and "
                    f"did not come back within {now - busy_since:.0f} s; the session is "
                    "kept: `navtui --resume ID` continues it"
                ), why="server unreachable") from None
            wire.busy.release(False)
            if refused >= CONNECT_RETRIES:
                raise BackendError(wire.scrub(
                    f"cannot connect to {wire.base_url} ({reason(exc)}). Is the server "
                    f"running? {server_hint(wire.model)}"
                )) from None
            wire.sleep(wire.backoff * 2**refused)
            refused += 1
            continue
        except httpx.TimeoutException:
            wire.busy.release(False)
            if wire.cancelled.is_set():
                raise Cancelled from None
            raise _stalled(wire) from None
        except httpx.TransportError as exc:
            wire.busy.release(False)
            if wire.cancelled.is_set():
                raise Cancelled from None
            raise StreamDropped(wire.scrub(
                f"connection to {wire.base_url} broke before the reply began ({reason(exc)})"
            )) from None
        with wire.lock:
            wire.response = response
        wire.reached = True
        if wire.cancelled.is_set():
            response.close()
            wire.busy.release(False)
            raise Cancelled
        if response.status_code < 400:
            return response
        message, parsed = server_message(response)
        response.close()
        status = response.status_code
        if status in RETRY_STATUSES:
            now = time.monotonic()
            busy_since = busy_since if busy_since is not None else now
            pause = wire.busy.refused(retry_after(response), busy_retries)
            if (wire.max_retries is None or busy_retries < wire.max_retries) and (
                now - busy_since < wire.busy.deadline
            ):
                busy_retries += 1
                left = busy_since + wire.busy.deadline - now
                yield Waiting(f"server busy (HTTP {status})", now - busy_since, min(pause, left))
                wire.sleep(min(pause, left))
                continue
            raise ServerUnavailable(
                wire.scrub(_busy_message(wire.base_url, status, message, busy_retries,
                                         now - busy_since)),
                why=f"server busy (HTTP {status})",
            )
        wire.busy.release(False)
        too_long = context_too_long(message, parsed) if status in CONTEXT_STATUSES else None
        if too_long is not None:
            raise ContextTooLong(
                wire.scrub(f"{wire.base_url} refused the prompt as longer than its context "
                           f"window (HTTP {status}: {message})"),
                too_long.limit, too_long.prompt_tokens,
            )
        if status >= 500:
            raise StreamDropped(wire.scrub(
                f"{wire.base_url} failed with HTTP {status}: {message}; check the server's log"))
        raise BackendError(wire.scrub(_http_error(wire.base_url, wire.model, status, message)))


def _take_slot(wire: Wire, busy_since: float | None) -> Iterator[Waiting]:
    """Wait for a slot of the shared backoff (its pause, or a full in-flight limit), saying so
    once the wait is long; Cancelled on cancel."""
    started = time.monotonic()
    said = 0.0
    while True:
        left = wire.busy.acquire(0.25)
        if left is None:
            return
        if wire.cancelled.is_set():
            raise Cancelled
        waited = time.monotonic() - started
        if waited >= SLOT_WAIT_SAID and (said == 0.0 or waited - said >= WAIT_EVERY):
            said = waited
            if left > 0:
                yield Waiting("server paused every request (busy or restarting)", waited, left)
            else:
                yield Waiting(f"waiting for a free slot ({wire.busy.in_flight} requests in "
                              f"flight, the server takes {wire.busy.limit})", waited, None)


def _stalled(wire: Wire) -> StreamStalled:
    return StreamStalled(wire.scrub(
        f"{wire.base_url} sent nothing for {wire.timeout:g} s; the server may be "
        "stuck or overloaded (check its log, or raise --request-timeout)"))


def _busy_message(url: str, status: int, message: str, retries: int, waited: float) -> str:
    return (f"{url} is still busy after {retries} retries (HTTP {status}: {message}) over "
            f"{waited:.0f} s; try again later or lower the load on the server (the session is "
            "kept: `navtui --resume ID` continues it)")


def _http_error(url: str, model: str, status: int, message: str) -> str:
    if status in (401, 403):
        return (f"{url} refused the API key (HTTP {status}: {message}); set --api-key or "
                f"{' / '.join(API_KEY_ENV_VARS)}")
    if status == 404:
        return (f"{url} answered HTTP 404 ({message}); check --base-url (usually ends in /v1) "
                f"and --model {model!r} (the server lists its models at {url}/models)")
    return f"{url} rejected the request with HTTP {status}: {message}"
