"""The text dialect: `Thought:` / `Action:` turns of the R2E-Gym SFT model."""

import pytest

from agent_core.actions import Bash, Edit, Read, Search, Submit
from agent_core.formats import ParseError, get_dialect, parse, render
from agent_core.formats.examples import EXAMPLE_HEADER
from agent_core.formats import text as text_dialect


def action(raw: str):
    return parse(raw, "text").action


def test_reply_that_continues_the_prompt_needs_no_thought_prefix():
    step = parse(" The list is empty.\nAction: bash ls -la src", "text")
    assert step.thought == "The list is empty."
    assert step.action == Bash(command="ls -la src")
    assert step.dialect == "text"
    assert step.raw == " The list is empty.\nAction: bash ls -la src"
    assert step.notice is None


def test_leading_thought_prefix_is_dropped_from_the_thought():
    step = parse("Thought: look at utils\nfirst\nAction: read src/utils.py", "text")
    assert step.thought == "look at utils\nfirst"
    assert step.action == Read(path="src/utils.py")


def test_bash_takes_the_rest_of_the_line_and_following_lines():
    raw = "Thought: x\nAction: bash cd src &&\n  python -m pytest -q \\\n    tests\n"
    assert action(raw) == Bash(command="cd src &&\n  python -m pytest -q \\\n    tests")


def test_bash_command_may_start_on_the_next_line_and_in_a_fence():
    assert action("Action: bash\n```bash\ngrep -rn foo .\n```\n") == Bash("grep -rn foo .")


def test_action_ends_where_the_model_writes_its_own_observation():
    raw = "Thought: t\nAction: bash ls\nObservation:\nREADME.md\n"
    step = parse(raw, "text")
    assert step.action == Bash(command="ls")
    assert step.notice is None


def test_second_action_is_not_proposed_and_the_model_is_told():
    raw = "Thought: a\nAction: bash ls\nObservation: x\nThought: b\nAction: submit\n"
    step = parse(raw, "text")
    assert step.action == Bash(command="ls")
    assert "2 actions" in step.notice and "NOT run" in step.notice and "(bash)" in step.notice


def test_edit_keeps_leading_indentation_and_blank_lines_verbatim():
    raw = "Thought: fix\nAction: edit src/calc.py 12 14\n    if x:\n\n        return 1\n"
    assert action(raw) == Edit(
        path="src/calc.py", start=12, end=14, content="    if x:\n\n        return 1"
    )


def test_edit_with_no_lines_deletes_and_start_minus_one_inserts():
    assert action("Action: edit a.py 3 4") == Edit(path="a.py", start=3, end=4, content="")
    assert action("Action: edit a.py 3 2\nnew\n") == Edit("a.py", 3, 2, "new")


def test_edit_path_with_spaces():
    assert action("Action: edit my dir/a b.py 1 1\nx") == Edit("my dir/a b.py", 1, 1, "x")


@pytest.mark.parametrize(
    "args, expected",
    [
        ("foo", Search("foo")),
        ('"def parse" src/', Search("def parse", "src/")),
        ("'x y'", Search("x y")),
        ("def parse", Search("def parse")),
        ("parse src/app.py", Search("parse", "src/app.py")),
        ("raise ValueError(  .", Search("raise ValueError(", ".")),
        ("self.freq", Search("self.freq")),
    ],
)
def test_search_rule_for_quoted_and_unquoted_patterns(args, expected):
    assert action(f"Thought: s\nAction: search {args}") == expected


def test_submit_ignores_trailing_words():
    assert action("Thought: done\nAction: submit now") == Submit()


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ("I think the bug is in utils.py, let me look.", "No action found"),
        ("Thought: x\nAction: run ls", "Unknown action 'run ls'"),
        ("Thought: x\nAction:", "Unknown action"),
        ("Action: edit a.py one 2\nx", "whole numbers"),
        ("Action: edit a.py 5 3\nx", "not a valid range"),
        ("Action: edit a.py 0 1\nx", "not a valid range"),
        ("Action: edit a.py 3", "edit needs a file and two line numbers"),
        ("Action: bash   \n", "bash needs a command"),
        ("Action: read", "read needs a file"),
        ("Action: search", "search needs a pattern"),
        ('Action: search "unclosed', "Unbalanced quotes"),
        ("Action: search 'a' 'b' 'c'", "optional path"),
    ],
)
def test_failures_say_what_was_wrong_and_show_an_example(raw, fragment):
    with pytest.raises(ParseError) as info:
        parse(raw, "text")
    message = str(info.value)
    assert fragment in message
    assert info.value.dialect == "text"
    assert message.endswith(get_dialect("text").example)
    assert "Action: bash ls /testbed" in message.split(EXAMPLE_HEADER)[1]


def test_render_shape():
    assert render(Bash("ls"), "text", "look") == "Thought: look\nAction: bash ls"
    assert render(Edit("a.py", 2, 3, "  x"), "text") == "Action: edit a.py 2 3\n  x\n"
    assert render(Search("a b", "src"), "text") == "Action: search 'a b' 'src'"
    assert render(Search("a", "src/x.py"), "text") == "Action: search a src/x.py"


@pytest.mark.parametrize(
    "bad",
    [
        Bash("echo 1\nAction: submit"),
        Bash("  ls"),
        Edit("a.py", 1, 1, "x\nObservation: y"),
        Edit("a.py", 3, 1, "x"),
        Read("a\nb"),
        Search("a\nb"),
    ],
)
def test_render_refuses_what_would_read_back_differently(bad):
    with pytest.raises(ValueError):
        render(bad, "text")


@pytest.mark.parametrize(
    "written", ["Observation:", "Observation", "OBSERVATION:", "observation", "## Your turn:"]
)
def test_stop_strings_cut_a_model_written_observation_or_next_turn(written):
    from agent_core.backends.stop_strings import StopScanner

    scanner = StopScanner(text_dialect.STOP_AFTER, text_dialect.STOP_BEFORE)
    shown = scanner.feed("Thought: look\nAction: bash ls\n") + scanner.feed(f"{written} x\n")
    assert scanner.done and shown == "Thought: look\nAction: bash ls"
    assert "\nThought:" in text_dialect.STOP_BEFORE


@pytest.mark.parametrize(
    "raw, command",
    [
        ("Action: bash ls -la\nthen prose the model wrote\nrm -rf build", "ls -la"),
        ("Action: bash cat > a.py <<'EOF'\nprint('hi')\nEOF\nprose", "cat > a.py <<'EOF'\nprint('hi')\nEOF"),
        ("Action: bash cat <<-END > b\n\tx\n\tEND\nprose", "cat <<-END > b\n\tx\n\tEND"),
        ('Action: bash python -c "\nimport os\nprint(1)\n"\nprose', 'python -c "\nimport os\nprint(1)\n"'),
        ("Action: bash pytest a \\\n  -x\nprose", "pytest a \\\n  -x"),
        ("Action: bash\n```bash\nls\npwd\n```\nprose", "ls\npwd"),
        ("Action: bash\nls\nprose", "ls"),
        ("Action: bash grep -c x <<< 'a'\nprose", "grep -c x <<< 'a'"),
    ],
)
def test_a_bash_action_is_its_first_line_unless_the_command_continues(raw, command):
    assert action(raw) == Bash(command=command)
