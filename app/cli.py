"""The `navtui` command line."""

from __future__ import annotations

import argparse
import sys

from agent_core import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="navtui",
        description="Fix code with a local model: it proposes one action at a time, you approve.",
    )
    parser.add_argument("--version", action="version", version=f"navtui {__version__}")
    parser.add_argument("repo", metavar="REPO", nargs="?", help="path to a local git repository")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.repo is None:
        build_parser().print_help()
        return 1
    print("navtui: the session runner is not wired in yet", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
