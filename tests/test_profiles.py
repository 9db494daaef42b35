"""Prompt profiles: packaged ones load, files extend them, mistakes say what to fix."""

from __future__ import annotations

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
