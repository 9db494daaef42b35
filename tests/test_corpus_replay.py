"""The corpus replayed: observations navtui builds equal SWE-smith's, byte for byte.

For every observation of the real SWE-smith trajectories (`tests/data/swe-smith/`) whose tool call
navtui can re-run on a fixture repository, the fixture is rebuilt from what the observation shows
(the lines a `cat -n` view printed, the lines `grep -n` matched, the snippet an edit printed, the
files a `rm` removed), the call runs through navtui's real executor at a temporary root, and the
observation navtui formats for the xml model must equal the corpus's: envelope, CRLF line
endings, `/testbed` paths, headers, `cat -n` layout, edit snippets, the review message. Calls whose
inputs cannot be rebuilt (the repositories' own code, test runs) are counted, not silently
dropped: a test asserts how many were replayed and what the others are.
"""

from __future__ import annotations

import json
import re
import shlex
import tempfile
from pathlib import Path

import pytest

from agent_core import prompts
from agent_core.actions import Bash, StrReplaceEditor, Submit
from agent_core.executor import Executor
from agent_core.formats import parse
from agent_core.profiles import Profile
from agent_core.steps import Observation

CORPUS = Path(__file__).resolve().parent / "data" / "swe-smith" / "swesmith_xml_conversations.jsonl"
NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")


def exchanges() -> list[tuple[str, int, object, str]]:
    found = []
    for line in CORPUS.read_text().splitlines():
        record = json.loads(line)
        messages = record["messages"]
        for i, message in enumerate(messages[:-1]):
            if message["role"] == "assistant":
                action = parse(message["content"], "xml").action
                found.append((record["instance_id"], i, action, messages[i + 1]["content"]))
    return found


EXCHANGES = exchanges()


def body_lines(observation: str) -> list[str]:
    body = observation.removeprefix("OBSERVATION:\n")
    return body.split("\r\n")


def numbered_lines(lines: list[str]) -> dict[int, str]:
    shown = {}
    for line in lines:
        match = NUMBERED.match(line)
        if match:
            shown[int(match.group(1))] = match.group(2)
        elif re.fullmatch(r" *\d+", line):  # the empty last line (its tab stripped with the end)
            shown[int(line)] = ""
    return shown


def write_lines(path: Path, shown: dict[int, str], *, last: int | None = None) -> None:
    """A file whose lines `shown` are as given, filler elsewhere, ending at line `last`."""
    last = last or max(shown)
    lines = [shown.get(n, f"# filler line {n}") for n in range(1, last + 1)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def real(root: Path, model_path: str) -> Path:
    return root / model_path.removeprefix("/testbed/")


def rebuild(action: object, observation: str, root: Path) -> bool:
    """Prepare `root` so that running `action` can give `observation`; False when it cannot."""
    lines = body_lines(observation)
    if isinstance(action, StrReplaceEditor) and action.command == "view":
        shown = numbered_lines(lines[1:])
        if not shown or not lines[0].startswith("Here's the result of running `cat -n`"):
            return False
        full = action.view_range is None or action.view_range[1] == -1
        write_lines(real(root, action.path), shown, last=max(shown) if full else None)
        return True
    if isinstance(action, StrReplaceEditor) and action.command == "create":
        real(root, action.path).parent.mkdir(parents=True, exist_ok=True)
        return True
    if isinstance(action, StrReplaceEditor) and action.command == "str_replace":
        if "has been edited" not in lines[0]:
            return False
        first = lines[0].split(":", 1)[1] if lines[0].endswith(":") else ""
        shown = numbered_lines([first, *lines[1:-1]] if first else lines[1:-1])
        after = "\n".join(shown.get(n, f"# filler line {n}") for n in range(1, max(shown) + 1))
        old, new = action.old_str or "", (action.new_str or "").expandtabs()
        if not new or after.count(new) != 1 or old in after:
            return False
        # The snippet stops 4 lines after the edit unless the file ended first.
        window_end = after[: after.index(new)].count("\n") + 4 + new.count("\n")
        if max(shown) >= window_end:
            after += "".join(f"\n# filler line {n}" for n in range(max(shown) + 1, max(shown) + 6))
        path = real(root, action.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(after.replace(new, old))
        return True
    if isinstance(action, Bash):
        words = shlex.split(action.command.removeprefix("cd /testbed && "))
        if words[0] == "rm":
            for word in words[1:]:
                if not word.startswith("-"):
                    path = real(root, word if word.startswith("/") else f"/testbed/{word}")
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text("x")
            return True
        if words[0] == "grep" and words[1] == "-n" and len(words) == 4:
            matches = {}
            for line in lines:
                number, _, text = line.partition(":")
                matches[int(number)] = text
            write_lines(real(root, words[3]), matches)
            return True
    return False


def tool_calls() -> list[tuple[str, int, object, str]]:
    return [(i, n, a, o) for i, n, a, o in EXCHANGES if not isinstance(a, Submit)]


def can_rebuild(action: object, observation: str) -> bool:
    with tempfile.TemporaryDirectory() as scratch:
        return rebuild(action, observation, Path(scratch))


REPLAYED = [call for call in tool_calls() if can_rebuild(call[2], call[3])]


def test_most_tool_calls_are_replayed():
    left = [action for _, _, action, observation in tool_calls() if not can_rebuild(action, observation)]
    # All 28 views, 18 str_replace edits and 10 creates; of the 41 bash calls, the 3 `rm` and
    # 3 `grep -n PATTERN FILE`. The other 35 bash calls run the repositories' own code.
    assert len(REPLAYED) == 62
    assert len(left) == 35 and all(isinstance(action, Bash) for action in left)


@pytest.mark.parametrize(
    "instance, index, action, observation", REPLAYED, ids=[f"{i}-{n}" for i, n, _, _ in REPLAYED]
)
def test_replayed_observation_equals_the_corpus(tmp_path, instance, index, action, observation):
    root = tmp_path / "repo"
    root.mkdir()
    assert rebuild(action, observation, root)
    with Executor(root, command_timeout=30) as executor:
        result = executor.execute(executor.prepare(action).action)
        text = prompts.format_observation(
            "xml", action, result, to_model=executor.path_map.to_model
        )
    assert text == observation


@pytest.mark.parametrize(
    "instance, index, observation",
    [(i, n, o) for i, n, a, o in EXCHANGES if isinstance(a, Submit) and "<diff>" in o],
)
def test_review_on_submit_message_equals_the_corpus(instance, index, observation):
    body = observation.removeprefix("OBSERVATION:\n").replace("\r\n", "\n")
    diff = body[body.index("<diff>\n") + 7 : body.rindex("\n</diff>")]
    swesmith = prompts.profile_for("xml")
    # The corpus was made at SWE-agent's own clipping limit, 100000 characters (navtui: 16000).
    profile = Profile(swesmith.name, {**swesmith.data, "max_observation_length": 100_000})
    text = prompts.submit_review_text(profile.submit_review_messages[0], diff, "")
    observed = Observation(text, exit_code=0)
    assert prompts.format_observation("xml", Submit(), observed, profile=profile) == observation
