"""KV-cache reuse across turns: prefilled tokens and wall time per turn, with and without reuse.

A 12-turn agent conversation (system prompt, issue, then per turn: the model's reply + a tool
observation) runs on two HFBackend instances of the same model, turn by turn back to back so
machine load hits both alike: one keeps the previous turn's KV cache (`reuse_cache=True`), one
prefills the whole prompt every turn. Greedy decoding, so both must produce identical replies.

Columns: `prompt` tokens; `added` = prompt growth since the previous turn (previous reply +
observation); `unseen` = tokens the model never processed before (added minus the previous
reply's generated tokens); `prefill` = tokens run through the model before the first new token.
Target: on turns 2..N, prefill with reuse <= 1.2 x added.

    python bench/prefill_reuse.py [--model DIR] [--turns 12] [--new-tokens 24] [--thinking on|off]

Without --model it uses the tiny random Qwen3 test model (built and cached by tests/tiny_model.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from agent_core.backends.base import Prompt
from agent_core.backends.hf import HFBackend

SYSTEM = (
    "You are a software engineer fixing a bug in the repository at /repo. Work one step at a time: "
    "think, then call exactly one tool. Tools: bash (run a command), read (show a file), "
    "str_replace (edit a file), submit (finish). Keep edits minimal and run the tests before you submit."
)
ISSUE = (
    "`total()` in src/cart.py is off by one: for items [1, 2] it returns 2 instead of 3. The test "
    "tests/test_cart.py::test_total fails. Find the cause, fix it, and make the test suite pass."
)
CART_SOURCE = "\n".join(
    [f"def price_{i}(value, rate={i / 100}):\n    return round(value * (1 + rate), 2)\n" for i in range(12)]
    + ["def total(items):\n    result = 0\n    for item in items[1:]:\n        result += item"]
    + ["    return result"]
)
TEST_LOG = "\n".join(
    [f"tests/test_cart.py::test_price_{i} PASSED" for i in range(12)]
    + ["tests/test_cart.py::test_total FAILED", "E   assert 2 == 3", "1 failed, 12 passed in 0.05s"]
)
OBSERVATIONS = [
    "src/\n  cart.py\n  prices.py\ntests/\n  test_cart.py\nREADME.md\nsetup.cfg",
    CART_SOURCE,
    TEST_LOG,
    "The file src/cart.py has been edited. Line 3 now reads: `    for item in items:`",
    TEST_LOG.replace("FAILED", "PASSED").replace("1 failed, 12", "13"),
    "diff --git a/src/cart.py b/src/cart.py\n-    for item in items[1:]:\n+    for item in items:",
]


def tiny_model_dir() -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, for `tests`
    from tests.fixtures.models import model_artefact

    return str(model_artefact())


def timed_turn(backend: HFBackend, prompt: Prompt) -> tuple[str, float]:
    started = time.perf_counter()
    reply = "".join(backend.stream(prompt))
    return reply, time.perf_counter() - started


def median_ratio(*, full: list[float], reuse: list[float]) -> str:
    a, b = statistics.median(full) * 1e3, statistics.median(reuse) * 1e3
    return f"{a:.1f}/{b:.1f} ms = {a / b:.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="local model directory (default: the tiny test model)")
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--new-tokens", type=int, default=24)
    parser.add_argument("--thinking", choices=["on", "off"], help="default: the chat template's")
    args = parser.parse_args()

    model = args.model or tiny_model_dir()
    thinking = None if args.thinking is None else args.thinking == "on"
    reusing = HFBackend(model, enable_thinking=thinking, reuse_cache=True)
    fresh = HFBackend(model, enable_thinking=thinking, reuse_cache=False)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ISSUE}]

    print(f"model: {model}   turns: {args.turns}   new tokens/turn: <= {args.new_tokens}")
    groups = f"{'with reuse':<14} | {'full':<7} | {'time to first token, ms':<23} | wall time per turn, ms"
    print(f"{'':27}| {groups}")
    print(
        f"{'turn':>4} {'prompt':>6} {'added':>6} {'unseen':>6} | {'prefill':>7} {'/added':>6} | "
        f"{'prefill':>7} | {'reuse':>6} {'full':>6} {'ratio':>6}  | {'reuse':>6} {'full':>6} {'ratio':>6}"
    )
    previous_prompt = previous_new = 0
    ratios: list[float] = []
    ttft = {"reuse": [], "full": []}
    wall = {"reuse": [], "full": []}
    prefill_total = {"reuse": 0, "full": 0}
    identical = True
    for turn in range(1, args.turns + 1):
        prompt = Prompt(messages=[dict(m) for m in messages], max_new_tokens=args.new_tokens)
        # Alternate which variant goes first so warm-up and load drift hit both alike.
        order = [("reuse", reusing), ("full", fresh)][:: 1 if turn % 2 else -1]
        replies, walls = {}, {}
        for label, backend in order:
            replies[label], walls[label] = timed_turn(backend, prompt)
        identical &= replies["reuse"] == replies["full"]
        used, baseline = reusing.last_usage, fresh.last_usage
        prefilled = used.prompt_tokens - used.cached_tokens
        full = baseline.prompt_tokens - baseline.cached_tokens
        added = used.prompt_tokens - previous_prompt
        unseen = str(added - previous_new) if turn > 1 else "-"
        ratio = prefilled / added
        if turn > 1:
            ratios.append(ratio)
            ttft["reuse"].append(used.time_to_first_token)
            ttft["full"].append(baseline.time_to_first_token)
            wall["reuse"].append(walls["reuse"])
            wall["full"].append(walls["full"])
        prefill_total["reuse"] += prefilled
        prefill_total["full"] += full
        print(
            f"{turn:>4} {used.prompt_tokens:>6} {added:>6} {unseen:>6} | {prefilled:>7} {ratio:>6.2f} | "
            f"{full:>7} | {used.time_to_first_token * 1e3:>6.1f} {baseline.time_to_first_token * 1e3:>6.1f} "
            f"{baseline.time_to_first_token / used.time_to_first_token:>6.2f}  | "
            f"{walls['reuse'] * 1e3:>6.1f} {walls['full'] * 1e3:>6.1f} {walls['full'] / walls['reuse']:>6.2f}"
        )
        previous_prompt, previous_new = used.prompt_tokens, used.new_tokens
        observation = OBSERVATIONS[(turn - 1) % len(OBSERVATIONS)]
        messages += [
            {"role": "assistant", "content": replies["reuse"]},
            {"role": "user", "content": f"<tool_response>\n{observation}\n</tool_response>"},
        ]

    n = args.turns
    print()
    print(f"identical replies with and without reuse: {'yes' if identical else 'NO'}")
    print(
        f"turns 2..{n}: max prefill/added with reuse = {max(ratios):.2f} "
        f"(target <= 1.20: {'met' if max(ratios) <= 1.2 else 'NOT met'})"
    )
    print(
        f"all turns: prefilled tokens full/reuse = {prefill_total['full']}/{prefill_total['reuse']} = "
        f"{prefill_total['full'] / prefill_total['reuse']:.2f}x"
    )
    print(f"turns 2..{n}: median time to first token full/reuse = {median_ratio(**ttft)}")
    print(f"turns 2..{n}: median wall time per turn full/reuse = {median_ratio(**wall)}")
    reusing.close()
    fresh.close()

if __name__ == "__main__":
    main()
