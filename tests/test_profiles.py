"""Prompt profiles: packaged ones load, files extend them, mistakes say what to fix."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest

from agent_core.profiles import PROFILES, ProfileError, load_profile


def test_packaged_profiles():
    assert PROFILES == ("card", "r2e-card", "swesmith")
    for name in PROFILES:
        assert load_profile(name).name == name


def test_dialect_specific_templates_win():
    swesmith = load_profile("swesmith")
    assert swesmith.render("system_template", "toolcall") == (
        "You are a helpful assistant that can interact with a computer to solve tasks."
    )
    xml_system = swesmith.render("system_template", "xml")
    assert xml_system.startswith(swesmith.render("system_template") + "\n<IMPORTANT>")
    assert "---- BEGIN FUNCTION #3: str_replace_editor ----" in xml_system


def test_a_file_extends_a_profile_and_keeps_its_own_name(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("extends: swesmith\nmax_observation_length: 500\n"
                    "templates:\n  next_step_template: |-\n    OUT:\n    {{observation}}\n")
    profile = load_profile(str(path))
    assert profile.name == "mine" and profile.max_observation_length == 500
    assert profile.render("next_step_template", observation="x") == "OUT:\nx"
    assert profile.render("next_step_no_output_template").startswith("Your command ran")
    directory = tmp_path / "dir"
    directory.mkdir()
    (directory / "profile.yaml").write_text("extends: r2e-card\n")
    assert load_profile(str(directory)).turn_header == "## Your turn:\nThought:"


def test_mistakes_name_the_fix(tmp_path):
    with pytest.raises(ProfileError, match="give one of card, r2e-card, swesmith"):
        load_profile("nope")
    loop = tmp_path / "loop.yaml"
    loop.write_text(f"extends: {loop}\n")
    with pytest.raises(ProfileError, match="extends itself"):
        load_profile(str(loop))
    broken = tmp_path / "broken.yaml"
    broken.write_text("templates: [unclosed\n")
    with pytest.raises(ProfileError, match="cannot read prompt profile"):
        load_profile(str(broken))
    with pytest.raises(ProfileError, match="has no template 'missing_template'"):
        load_profile("swesmith").render("missing_template")
    with pytest.raises(ProfileError, match="'observation' is undefined"):
        load_profile("swesmith").render("next_step_template")


def write(tmp_path, text: str, name: str = "mine.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("extends: swesmith\nmax_observation_lenght: 500\n", 2,
         "max_observation_lenght: unknown key; did you mean 'max_observation_length'? the keys are: name, "),
        ("extends: swesmith\n\nmax_observation_length: lots\n", 3,
         "max_observation_length: expected a whole number of characters, or null, got 'lots'"),
        ("extends: swesmith\nsubmit_review_messages: review it\n", 2,
         "submit_review_messages: expected a list of strings, or null, got 'review it'"),
        ("extends: swesmith\ntemplates:\n  system_template: hi\n  instance_templat: |-\n    {{problem_statement}}\n", 4,
         "templates.instance_templat: unknown template; did you mean 'instance_template'?"),
        ("extends: swesmith\ntemplates:\n  next_step_template: |-\n    {{ observation\n", 3,
         "templates.next_step_template: not a valid Jinja2 template: "),
        ("extends: swesmith\ntemplates:\n  next_step_template_text: |-\n    {{ output }}\n", 3,
         "templates.next_step_template_text: uses output, which it is never given (its variables: observation)"),
        ("extends: swesmith\ntemplates:\n  system_template: [a, b]\n", 3,
         "templates.system_template: expected the template's text, got ['a', 'b']"),
        ("extends: swesmith\nexit_code_template: '[{{code}}]'\n", 2,
         "exit_code_template: uses code, which it is never given (its variables: exit_code)"),
        ("extends: swesmith\ntools:\n  bash:\n    docstring: run it\n    arguments:\n      - name: command\n"
         "        typ: string\n", 3,
         "tools.bash.arguments.0.typ: unknown key; did you mean 'type'?"),
        ("extends: swesmith\ntools:\n  bash:\n    arguments:\n      - name: command\n        type: string\n", 3,
         "tools.bash.arguments.0: missing description"),
    ],
)
def test_a_mistake_in_a_profile_file_fails_when_it_loads(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(ProfileError) as raised:
        load_profile(str(path))
    assert str(raised.value).startswith(f"prompt profile {path}:{line}: {message}")


def test_a_mistake_in_the_extended_file_names_that_file(tmp_path):
    base = write(tmp_path, "extends: swesmith\nturn_header: 3\n", "base.yaml")
    child = write(tmp_path, f"extends: {base}\n", "child.yaml")
    with pytest.raises(ProfileError, match=rf"prompt profile {base}:2: turn_header: expected a string"):
        load_profile(str(child))


def test_the_typed_profile_holds_what_the_file_says(tmp_path):
    path = write(tmp_path, "extends: r2e-card\nmax_observation_length: 0\nobservation_line_ending: null\n"
                           "submit_review_messages: ['Look again:\n\n{{diff}}']\n")
    profile = load_profile(str(path))
    spec = profile.spec
    assert (spec.max_observation_length, spec.observation_line_ending, spec.turn_header) == (
        0, "\n", "## Your turn:\nThought:")
    assert spec.submit_review_messages == ("Look again:\n{{diff}}",)
    assert [tool.name for tool in load_profile("swesmith").spec.tools] == ["bash", "str_replace_editor", "submit"]


def test_a_template_for_no_dialect_or_a_missing_one_is_refused_before_the_session(tmp_path):
    from agent_core.prompts import check_profile

    typo = write(tmp_path, "extends: swesmith\ntemplates:\n  instance_template_txt: |-\n    {{problem_statement}}\n")
    with pytest.raises(ProfileError, match=r"templates for no dialect \(txt\): .* _text or _toolcall or _xml"):
        check_profile(str(typo))
    alone = write(tmp_path, "templates:\n  instance_template: |-\n    {{problem_statement}}\n"
                            "  next_step_template_text: |-\n    {{observation}}\n", "alone.yaml")
    assert check_profile(str(alone)).name == "alone"  # the dialect is not known yet
    with pytest.raises(ProfileError, match=r"'alone' has no next_step_template, next_step_no_output"
                                           r".* for the toolcall dialect: add them under `templates:`"):
        check_profile(str(alone), "toolcall")
    for name in PROFILES:
        for dialect in ("text", "toolcall", "xml"):
            check_profile(name, dialect)


def test_navtui_stops_at_start_on_a_mistyped_profile(git_repo, scripted_http, tmp_path):
    from tests.test_cli import ISSUE, navtui

    path = write(tmp_path, "extends: swesmith\ntemplates:\n  rejection_templte: |-\n    No.\n")
    result = navtui("--auto", "--prompt-profile", str(path), "--base-url", scripted_http.base_url,
                    "--model", "navigator-8b", "--issue", ISSUE, str(git_repo))
    assert result.returncode == 1
    assert result.stderr.startswith(f"navtui: prompt profile {path}:3: templates.rejection_templte: "
                                    "unknown template; did you mean 'rejection_template'?")
    assert scripted_http.requests == []  # no turn was asked for


def test_the_app_refuses_a_mistyped_profile_before_its_screen_opens(git_repo, tmp_path):
    from tests.test_session import FIX_SCRIPTS, write_script

    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["toolcall"])
    path = write(tmp_path, "extends: swesmith\nturn_header: [Thought]\n")
    env = {**os.environ, "TERM": "xterm-256color", "NAVTUI_CONFIG": str(tmp_path / "none.toml")}
    child = pexpect.spawn(str(Path(sys.executable).parent / "navtui"),
                          ["--script", str(script), "--prompt-profile", str(path), str(git_repo)],
                          cwd=str(tmp_path), env=env, dimensions=(40, 120), timeout=90)
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    shown = child.before.decode()
    assert child.exitstatus == 1, shown
    assert f"navtui: prompt profile {path}:2: turn_header: expected a string, or null, got ['Thought']" in shown
    assert "What should the model fix" not in shown
