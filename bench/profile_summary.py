"""Summarise py-spy's raw (collapsed) stacks: each function's share of the main thread's samples,
inclusive, the top N.

    python bench/profile_summary.py FILE [--top 25] [--thread MainThread]
"""

from __future__ import annotations

import argparse
from collections import Counter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--thread", default="MainThread")
    args = parser.parse_args()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in open(args.file, encoding="utf-8"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if not frames or args.thread not in frames[0]:
            continue
        samples = int(count)
        total += samples
        for name in {frame.split(" (")[0] + " (" + frame.split(" (")[-1].split(":")[0].rsplit("/", 1)[-1] + ")"
                     for frame in frames[1:]}:
            inclusive[name] += samples
    print(f"{total} samples of {args.thread}")
    for name, samples in inclusive.most_common(args.top):
        print(f"{samples / total:6.1%}  {name}")


if __name__ == "__main__":
    main()
