"""Which files are tests, which command runs them, and what each test's outcome was.

`detect(checkout)` names the repository's test command: `npm test` (package.json with a test
script), `go test -v ./...` (go.mod), `cargo test` (Cargo.toml), else for Python test files
pytest (`-rA`, with navtui's own Python when it has pytest) or `python3 -m unittest -v`. `scoped(command, files)` narrows a
pytest or unittest command to the test files a task is about; other runners run whole.

`outcomes(output, code)` reads per-test results from the output of any of them (pytest's `-rA`
summary, unittest's `-v` lines, `go test -v`, `cargo test`); a runner whose output names no
test (`npm test` with most frameworks) counts as one test named `<command>`, passing when it
exits 0.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import sys
from pathlib import Path, PurePosixPath

WHOLE = "<command>"  # the one test of a runner whose output names none

_TEST_DIRS = {"test", "tests", "testing", "__tests__", "spec", "specs"}
_TEST_NAME = re.compile(
    r"^(?:test_.*\.py|.*_test\.py|.*_test\.go|.*\.(?:test|spec)\.[cm]?[jt]sx?|.*_tests?\.rs"
    r"|.*Test\.java|.*_spec\.rb)$"
)
_PYTEST = re.compile(r"^(PASSED|FAILED|ERROR|XPASS|XFAIL|SKIPPED)\s+(\S+)", re.MULTILINE)
_UNITTEST = re.compile(
    r"^(\w+) \(([\w.]+)\)(?:\n.*?)? \.\.\. (ok|FAIL|ERROR|skipped|expected failure|"
    r"unexpected success)", re.MULTILINE)
_GO = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)", re.MULTILINE)
_CARGO = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)", re.MULTILINE)
_PASSING = {"PASSED", "XFAIL", "ok", "expected failure", "PASS"}


def is_test_file(path: str) -> bool:
    """True for a file the repository's tests live in (by folder or by name)."""
    parts = PurePosixPath(path).parts
    return bool(_TEST_NAME.match(parts[-1])) or any(p.lower() in _TEST_DIRS for p in parts[:-1])


def detect(checkout: Path) -> str | None:
    """The command that runs `checkout`'s tests, or None when no known runner fits."""
    package = checkout / "package.json"
    if package.is_file():
        try:
            scripts = json.loads(package.read_text(encoding="utf-8")).get("scripts") or {}
        except (ValueError, AttributeError):
            scripts = {}
        if isinstance(scripts, dict) and scripts.get("test"):
            return "npm test"
    if (checkout / "go.mod").is_file():
        return "go test -v ./..."
    if (checkout / "Cargo.toml").is_file():
        return "cargo test"
    if any(is_test_file(str(p.relative_to(checkout))) for p in checkout.rglob("*.py")
           if ".git" not in p.parts):
        if importlib.util.find_spec("pytest"):  # navtui's own Python runs them
            return f"{shlex.quote(sys.executable)} -m pytest -rA -p no:cacheprovider"
        return "python3 -m unittest -v"
    return None


def scoped(command: str, files: list[str]) -> str:
    """`command` run on `files` only, where the runner takes file arguments (pytest, unittest)."""
    python_files = [f for f in files if f.endswith(".py")]
    if python_files and (" -m pytest" in command or " -m unittest" in command):
        return " ".join([command, *map(shlex.quote, python_files)])
    return command


def outcomes(output: str, code: int) -> dict[str, bool]:
    """Each test's name and whether it passed (see the module docstring)."""
    found: dict[str, bool] = {}
    for status, name in _PYTEST.findall(output):
        if status != "SKIPPED":
            found[name] = status in _PASSING
    for name, where, status in _UNITTEST.findall(output):
        if not status.startswith("skipped"):
            found[f"{where}.{name}" if not where.endswith(name) else where] = status in _PASSING
    for status, name in _GO.findall(output):
        if status != "SKIP":
            found[name] = status in _PASSING
    for name, status in _CARGO.findall(output):
        if status != "ignored":
            found[name] = status in _PASSING
    return found or {WHOLE: code == 0}
