"""The type check's baseline (.ci/typecheck.py) only shrinks: a new error fails, a fixed one
still listed fails, moved lines change nothing; agent_core is held at zero."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _typecheck():
    spec = importlib.util.spec_from_file_location("typecheck", ROOT / ".ci" / "typecheck.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_new_and_fixed_errors_are_told_apart_from_moved_ones():
    check = _typecheck()
    baseline = ["app/a.py: Bad thing  [misc]", "app/a.py: Bad thing  [misc]", "app/b.py: Gone  [x]"]
    errors = ["app/a.py:10: error: Bad thing  [misc]", "app/a.py:99: error: Bad thing  [misc]",
              "app/c.py:3: error: New one  [arg-type]"]
    new, fixed = check.compare(errors, baseline)
    assert new == ["app/c.py:3: error: New one  [arg-type]"]
    assert fixed == ["app/b.py: Gone  [x]"]
    assert check.compare(errors[:2], baseline[:2]) == ([], [])


def test_the_headless_core_has_no_baselined_error():
    entries = _typecheck().read_baseline()
    assert entries and not [e for e in entries if e.startswith("agent_core/")]
