"""Golden prompts: each profile's turn 1 and turn 3, to exact bytes and real Qwen token ids.

Turn 3 follows a long bash output (`seq 1 4000`, clipped where the profile clips) and a view of a
600-line Python file (SWE-agent's abbreviated filemap where the profile uses it), both run by the
real executor on a temporary repository. Chat dialects are rendered with the tokenizer's real
Qwen3 chat template (tools included), the way the hf backend renders them; token ids come from the
real Qwen vocabulary (`tiny_tokenizer_dir`).

A change to any prompt byte fails here. To change prompts deliberately, regenerate and review the
diff of tests/golden/prompts/:

    NAVTUI_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_golden_prompts.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_core import prompts
from agent_core.actions import Bash, Read, StrReplaceEditor
from agent_core.executor import Executor
from agent_core.formats import Turn, render

GOLDEN = Path(__file__).parent / "golden" / "prompts"
UPDATE = os.environ.get("NAVTUI_UPDATE_GOLDEN") == "1"
ISSUE = "average([]) raises ZeroDivisionError; it should return 0.0 for an empty list."
CASES = [
    ("swesmith", "toolcall"),
    ("swesmith", "xml"),
    ("r2e-card", "text"),
    ("card", "toolcall"),
    ("card", "xml"),
    ("card", "text"),
]


def big_python_file() -> str:
    """600 lines: a docstring, an import, 66 nine-line functions, two assignments (> 16,000
    characters, so SWE-agent shows it abbreviated)."""
    parts = ['"""Statistics helpers used by the golden prompt tests."""', "", "import math"]
    for n in range(66):
        parts += [
            "",
            f"def statistic_{n:02d}(values, weight={n}, scale=1.0):",
            f'    """Weighted statistic number {n} of the values (for the filemap test)."""',
            "    total = 0.0",
            "    for index, value in enumerate(values):",
            f"        total += (value * weight + index) * scale  # accumulate term {n}",
            "    if not values:",
            "        return 0.0",
            f"    return total / len(values)  # normalised statistic {n}",
        ]
    parts += ["", "STATISTICS = [statistic_00, statistic_65]", '__all__ = ["STATISTICS", "math"]']
    text = "\n".join(parts) + "\n"
    assert text.count("\n") == 600 and len(text) > 16_000
    return text


def scenario(dialect: str, profile: str, root: Path) -> list[Turn]:
    """Two executed turns: a long output, then a view of big.py."""
    (root / "big.py").write_text(big_python_file())
    view = Read("big.py") if dialect == "text" else StrReplaceEditor(command="view", path="/testbed/big.py")
    steps = [(Bash("seq 1 4000"), "Let me look at the numbers."), (view, "Now the module.")]
    turns = []
    with Executor(root, command_timeout=30) as executor:
        for action, thought in steps:
            observation = executor.execute(executor.prepare(action).action)
            text = prompts.format_observation(
                dialect, action, observation, profile=profile, to_model=executor.path_map.to_model
            )
            turns.append(Turn(render(action, dialect, thought), text))
    return turns


def rendered(prompt, tokenizer) -> tuple[str, list[int]]:
    if prompt.messages is None:
        return prompt.text, tokenizer.encode(prompt.text, add_special_tokens=False)
    options = dict(tools=prompt.tools, add_generation_prompt=True)
    text = tokenizer.apply_chat_template(prompt.messages, tokenize=False, **options)
    ids = tokenizer.apply_chat_template(prompt.messages, tokenize=True, return_dict=False, **options)
    return text, list(ids)


def check(name: str, text: str, ids: list[int]) -> None:
    text_file, ids_file = GOLDEN / f"{name}.txt", GOLDEN / f"{name}.ids"
    ids_text = " ".join(map(str, ids)) + "\n"
    if UPDATE:
        text_file.write_bytes(text.encode())
        ids_file.write_text(ids_text)
    assert text_file.is_file(), f"no golden file {text_file}: regenerate (see the module docstring)"
    assert text.encode() == text_file.read_bytes(), f"{name}: prompt bytes differ from the golden file"
    assert ids_text == ids_file.read_text(), f"{name}: token ids differ from the golden file"


@pytest.fixture(scope="module")
def tokenizer(tiny_tokenizer_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_tokenizer_dir)


@pytest.mark.parametrize("profile, dialect", CASES, ids=[f"{p}-{d}" for p, d in CASES])
def test_turn_1_and_turn_3_equal_the_golden_files(profile, dialect, tokenizer, tmp_path):
    first = prompts.build_prompt(dialect, ISSUE, [], profile=profile)
    check(f"{profile}-{dialect}-turn1", *rendered(first, tokenizer))
    third = prompts.build_prompt(dialect, ISSUE, scenario(dialect, profile, tmp_path), profile=profile)
    text, ids = rendered(third, tokenizer)
    check(f"{profile}-{dialect}-turn3", text, ids)
    assert str(tmp_path) not in text  # the model sees /testbed, never the real root
    if dialect == "text":
        assert text.startswith(first.text)  # a prompt is a prefix of the next one


def test_turn_3_shows_the_clip_note_and_the_filemap_where_swesmith_does(tokenizer, tmp_path):
    third = prompts.build_prompt("toolcall", ISSUE, scenario("toolcall", "swesmith", tmp_path))
    clipped, viewed = [m["content"] for m in third.messages if m["role"] == "tool"]
    # seq 1 4000 prints 18,893 characters; CRLF line ends and the stripped last one: 22,891
    assert clipped.startswith("Observation: 1\r\n2\r\n3\r\n")
    assert clipped.endswith("<response clipped><NOTE>Observations should not exceeded 16000 characters. "
                            "6891 characters were elided. Please try a different command that produces "
                            "less output or use head/tail/grep/redirect the output to a file. Do not use "
                            "interactive pagers.</NOTE>")
    assert len(clipped) == len("Observation: ") + 16_000 + len(clipped.split("<response clipped>")[1]) + 18
    assert viewed.startswith("OBSERVATION:\n<NOTE>This file is too large to display entirely.")
    assert "\r\n     5 def statistic_00(values, weight=0, scale=1.0):\r\n" in viewed
    assert "\r\n     6 ... eliding lines 6-12 ...\r\n     14 \r\n" not in viewed
    assert "\r\n     6 ... eliding lines 6-12 ...\r\n    13 \r\n    14 def statistic_01(" in viewed
    assert viewed.count("... eliding lines") == 66
    assert viewed.endswith("\r\n   600 __all__ = [\"STATISTICS\", \"math\"]\r\n<IMPORTANT><NOTE>The "
                           "above file has been abbreviated. Please use `str_replace editor view` with "
                           "`view_range` to look at relevant files in detail.</NOTE></IMPORTANT>")
