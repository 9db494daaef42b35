#!/usr/bin/env python3
"""The type check CI runs: mypy over agent_core, app and widgets (settings in pyproject.toml),
held against `.ci/mypy-baseline.txt`, the errors still left in the tree.

The baseline may only shrink. A new error fails the check and is shown with its line; an error
fixed but still listed fails too, so that the baseline always says what is left and a fixed
error cannot come back unnoticed: `python .ci/typecheck.py --update` writes it anew. Entries
leave out line numbers, so moving code does not touch the baseline.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-baseline.txt"
# "path:line: error: message  [code]" (mypy's default output, one error a line)
ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):(?P<line>\d+): error: (?P<message>.*)$")


def run_mypy() -> list[str]:
    """mypy's error lines for the project (its notes and summary dropped)."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary",
                           "--no-pretty", "--show-error-codes"],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"mypy itself failed (exit {done.returncode}):\n{done.stderr or done.stdout}")
    return [line for line in done.stdout.splitlines() if ERROR.match(line)]


def entry(line: str) -> str:
    """An error line as the baseline holds it: its path and message, no line number."""
    found = ERROR.match(line)
    assert found is not None
    return f"{found['path']}: {found['message']}"


def compare(errors: list[str], baseline: list[str]) -> tuple[list[str], list[str]]:
    """(error lines the baseline does not hold, baseline entries no error matches now)."""
    left = Counter(baseline)
    new = []
    for line in errors:
        key = entry(line)
        if left[key]:
            left[key] -= 1
        else:
            new.append(line)
    return new, sorted(left.elements())


def read_baseline() -> list[str]:
    if not BASELINE.exists():
        return []
    return [line for line in BASELINE.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]


def write_baseline(errors: list[str]) -> None:
    header = ("# mypy errors left in the tree (.ci/typecheck.py). It may only shrink: fix one, "
              "then run\n# `python .ci/typecheck.py --update`.\n")
    BASELINE.write_text(header + "".join(f"{e}\n" for e in sorted(map(entry, errors))),
                        encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true",
                        help="write the baseline from the errors now (only to shrink it, "
                             "or to start one)")
    options = parser.parse_args()
    errors = run_mypy()
    baseline = read_baseline()
    new, fixed = compare(errors, baseline)
    if options.update:
        if new and BASELINE.exists():
            print("\n".join(new))
            print(f"{len(new)} error(s) the baseline does not hold: fix them; the baseline "
                  "only shrinks", file=sys.stderr)
            return 1
        write_baseline(errors)
        print(f"baseline: {len(errors)} error(s) (was {len(baseline)})")
        return 0
    if new:
        print("\n".join(new))
        print(f"type check: {len(new)} new error(s) beside the {len(baseline)} in "
              f"{BASELINE.relative_to(ROOT)}; fix them", file=sys.stderr)
        return 1
    if fixed:
        print("\n".join(fixed))
        print(f"type check: {len(fixed)} error(s) of the baseline are fixed: run `python "
              f".ci/typecheck.py --update` to shrink it", file=sys.stderr)
        return 1
    print(f"type check: {len(errors)} error(s), all in the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
