"""`navtui batch` past the server's limit: throughput and 429 share at 1, 2, 4, 8 and 16 workers
against a local mock OpenAI-compatible server that takes `--limit` requests at once, in both of a
real server's modes, and the ETA's error at a quarter and half done.

The mock answers each chat request after `--latency` seconds. `reject` mode answers 429 with
`Retry-After: <latency>` at once past `--limit` requests in flight (a server with a full queue);
`queue` mode holds the extra requests until a slot frees (vLLM, SGLang, llama.cpp's queue). Each
instance is a real checkout of its own small repository and a real Session (bash through
navtui's executor, checkpoints, the log); the model's part is two requests: a `bash` call and a
`submit`. All workers share one `ServerBackoff` (its adaptive in-flight limit), as `navtui
batch` does. Printed per run: wall time, instances per minute, requests, the share answered 429,
the throughput over the run at `--limit` workers (the target: at 4x the slots, at least 1.0x),
and the ETA's error (estimate vs what was left) when a quarter and half of the instances were
done.

Run: `python bench/batch_throughput.py [--instances 32] [--latency 0.25] [--limit 4]
[--workers 1,2,4,8,16] [--modes reject,queue]` (everything under a temporary directory; no
bytecode written).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_core.backends.backoff import ServerBackoff  # noqa: E402
from agent_core.backends.openai_compat import OpenAIBackend  # noqa: E402
from agent_core.batch import Batch, BatchOptions, Instance  # noqa: E402
from agent_core.session import SessionConfig  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


class MockServer:
    """Fixed latency, at most `limit` requests in flight (beyond: 429 in `reject` mode, a wait
    for a slot in `queue` mode), stateless turns."""

    def __init__(self, latency: float, limit: int, mode: str) -> None:
        self.latency = latency
        self.limit = limit
        self.mode = mode
        self._slots = threading.Semaphore(limit)
        self.in_flight = 0
        self.requests = 0
        self.refused = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                self._send(404, b'{"error": "no listing"}', "application/json")

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if server.mode == "queue":
                    with server._lock:
                        server.requests += 1
                    with server._slots:
                        time.sleep(server.latency)
                    self._send(200, _turn(body), "text/event-stream")
                    return
                with server._lock:
                    server.requests += 1
                    full = server.in_flight >= server.limit
                    if full:
                        server.refused += 1
                    else:
                        server.in_flight += 1
                if full:
                    self.send_response(429)
                    self.send_header("Retry-After", f"{server.latency:g}")
                    self.send_header("Content-Length", "27")
                    self.end_headers()
                    self.wfile.write(b'{"error": "queue is full"}\n')
                    return
                try:
                    time.sleep(server.latency)
                    self._send(200, _turn(body), "text/event-stream")
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _send(self, status: int, payload: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def _turn(body: dict[str, Any]) -> bytes:
    """bash first, then submit."""
    replies = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    name, args = ("bash", {"command": "ls /testbed"}) if replies == 0 else ("submit", {})
    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 800, "completion_tokens": 20}},
    ]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


def make_repos(root: Path, count: int) -> list[Instance]:
    instances = []
    env = {**os.environ, **GIT_ENV}
    for i in range(count):
        repo = root / f"repo{i}"
        (repo / "pkg").mkdir(parents=True)
        (repo / "pkg/mod.py").write_text(f"def value():\n    return {i}\n")
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
            subprocess.run(["git", *args], cwd=repo, env=env, check=True)
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=env, check=True,
                              capture_output=True, text=True).stdout.strip()
        instances.append(Instance(f"inst-{i}", repo, head, f"value() should not return {i}"))
    return instances


def run(instances: list[Instance], output: Path, server: MockServer,
        workers: int) -> tuple[float, list[tuple[float, float | None]]]:
    """Wall time, and (time, ETA) after each finish."""
    shared = ServerBackoff(first=0.05)
    options = BatchOptions(
        output_dir=output,
        config=SessionConfig(dialect="toolcall", path_alias="/testbed", command_timeout=60.0,
                             backend_info={"backend": "openai", "model": "mock"}),
        make_backend=lambda _: OpenAIBackend(server.base_url, "mock", shared_backoff=shared),
        workers=workers,
    )
    batch = Batch(options)
    started = time.monotonic()
    etas: list[tuple[float, float | None]] = []
    results = batch.run(instances, on_result=lambda _: etas.append(
        (time.monotonic() - started, batch.progress.snapshot()["eta_s"])))
    elapsed = time.monotonic() - started
    bad = [r for r in results if r.status != "submitted"]
    if bad:
        raise SystemExit(f"{len(bad)} instances did not submit: {bad[0].status} {bad[0].message}")
    return elapsed, etas


def eta_error(etas: list[tuple[float, float | None]], elapsed: float, share: float) -> str:
    """The ETA's error (estimate / truth - 1) once `share` of the instances were done."""
    at, eta = etas[max(int(len(etas) * share) - 1, 0)]
    truth = elapsed - at
    if eta is None or truth <= 0:
        return "—"
    return f"{(eta - truth) / truth:+.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--limit", type=int, default=4)
    parser.add_argument("--workers", default="1,2,4,8,16")
    parser.add_argument("--modes", default="reject,queue")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    with tempfile.TemporaryDirectory(prefix="navtui-bench-") as tmp:
        root = Path(tmp)
        os.environ.update(GIT_ENV)
        instances = make_repos(root / "repos", args.instances)
        print(f"{args.instances} instances, 2 requests each; mock latency {args.latency:g} s, "
              f"{args.limit} requests at once (reject: 429 + Retry-After beyond; queue: wait)")
        print(f"{'mode':>6} {'workers':>7} {'wall s':>7} {'inst/min':>8} {'requests':>8} "
              f"{'429 %':>6} {'vs limit':>8} {'ETA@1/4':>8} {'ETA@1/2':>8}")
        for mode in args.modes.split(","):
            rates: dict[int, float] = {}
            for workers in counts:
                server = MockServer(args.latency, args.limit, mode)
                try:
                    elapsed, etas = run(instances, root / f"out-{mode}-{workers}", server, workers)
                finally:
                    server.stop()
                rate = rates[workers] = args.instances / elapsed * 60
                at_limit = rates.get(args.limit)
                ratio = f"{rate / at_limit:.2f}x" if at_limit else "—"
                share = server.refused / server.requests if server.requests else 0.0
                print(f"{mode:>6} {workers:>7} {elapsed:>7.2f} {rate:>8.1f} {server.requests:>8} "
                      f"{share:>6.1%} {ratio:>8} {eta_error(etas, elapsed, 0.25):>8} "
                      f"{eta_error(etas, elapsed, 0.5):>8}")


if __name__ == "__main__":
    main()
