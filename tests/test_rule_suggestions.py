"""Rule suggestions from real session logs, written by the headless path (`--plain` with answers
on stdin, `--auto`): what a person approved or rejected every time, never across `&&`/`;`/`|`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.policy import RulesPolicy, command_matches_any, command_touches_any
from agent_core.rule_suggestions import ALLOW, DENY, logged_decisions, suggest_rules
from agent_core.trajectory import repo_state_dir, sessions_dir
from tests.test_cli import navtui
from tests.test_session import write_script


def run_plain(repo: Path, folder: Path, turns: list[tuple[str, str]]) -> None:
    """A `--plain` session over `repo`: each turn a bash command (or another action, `read
    PATH`) and the answer typed for it ("a", or "r" with a reason)."""
    script = write_script(folder / f"script-{len(list(folder.glob('script-*')))}.jsonl", [
        f"Thought: step {n}\nAction: {'' if command.startswith('read ') else 'bash '}{command}"
        for n, (command, _) in enumerate(turns)])
    answers = "".join("a\n" if answer == "a" else "r\nno\n" for _, answer in turns)
    result = navtui("--plain", "--script", str(script), "--issue", "look", str(repo), stdin=answers)
    assert result.returncode == 2, result.stdout + result.stderr  # the script ran out


def run_auto(repo: Path, folder: Path, commands: list[str]) -> None:
    script = write_script(folder / "auto.jsonl", [f"Thought: go\nAction: bash {c}" for c in commands])
    result = navtui("--auto", "--script", str(script), "--issue", "look", str(repo))
    assert result.returncode == 2, result.stdout + result.stderr  # the script ran out


@pytest.fixture
def decided(git_repo: Path, tmp_path: Path):
    run_plain(git_repo, tmp_path, [
        *[(f"git log --oneline -n {k}", "a") for k in range(1, 7)],
        *[(f"rm -rf build{k}", "r") for k in range(1, 6)],
        ("ls && rm -rf calc", "r"),
        ("git status", "a"),
        ("git status --short", "a"),
    ])
    run_plain(git_repo, tmp_path, [
        *[(f"git diff --stat && git show --stat HEAD -- f{k}", "a") for k in range(5)],
        *[(f"echo $(whoami) {k}", "a") for k in range(5)],  # syntax no rule can judge
        *[(f"grep -n def calc/ops.py | head -{k}", "a") for k in range(1, 6)],
        *[("read calc/ops.py", "a") for _ in range(5)],
    ])
    run_auto(git_repo, tmp_path, [f"cat calc/ops.py # {k}" for k in range(6)])
    return logged_decisions([git_repo])


def test_the_log_says_who_decided_each_step(decided, git_repo: Path):
    logs = sorted(sessions_dir(repo_state_dir(git_repo)).glob("*.jsonl"))
    deciders = []
    for path in logs:
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if event["type"] in ("StepExecuted", "StepRejected"):
                deciders.append(event["record"]["decision"]["decided_by"])
    assert deciders.count("user") == 14 + 20 and deciders.count("auto") == 6
    assert not any(step.text.startswith("cat") for step in decided)  # auto mode's are left out


def test_always_approved_and_always_rejected_commands_become_suggestions(decided):
    found = suggest_rules(decided, min_count=5)
    allows = {s.prefix: len(s.evidence) for s in found if s.rule == ALLOW and s.prefix}
    denies = {s.prefix: len(s.evidence) for s in found if s.rule == DENY}
    assert allows == {"git log --oneline -n": 6, "git diff --stat": 5, "git show --stat HEAD --": 5,
                      "grep -n def calc/ops.py": 5, "head": 5}
    assert denies == {"rm -rf": 6}
    read = next(s for s in found if s.kind == "read")
    assert (read.key, len(read.evidence)) == ("allow kind read", 5)
    assert read.question() == "you approved every read action, 5 of 5 times: always allow them?"
    git_log = next(s for s in found if s.prefix == "git log --oneline -n")
    assert git_log.question() == "you approved `git log --oneline -n …` 6 of 6 times: always allow this prefix?"
    assert [(e.index, e.verdict) for e in git_log.evidence] == [(n, "approved") for n in range(1, 7)]


def test_suggestions_never_widen_across_separators(decided):
    found = suggest_rules(decided, min_count=5)
    for suggestion in found:
        assert not any(mark in suggestion.prefix for mark in ("&&", ";", "|", "$("))
    allowed = RulesPolicy(set(), [s.prefix for s in found if s.rule == ALLOW])
    assert not command_matches_any("git diff --stat && rm -rf calc", allowed.allow_prefixes)
    assert not command_matches_any("git diff --stat; curl x | sh", allowed.allow_prefixes)
    assert command_touches_any("ls && rm -rf calc", ["rm -rf"])


def test_a_rejected_compound_keeps_its_approved_part_from_being_suggested(decided):
    # `ls` was approved nowhere alone; `ls && rm -rf calc` was rejected: no allow rule for ls
    assert not any(s.prefix.startswith("ls") for s in suggest_rules(decided, min_count=1) if s.rule == ALLOW)


def test_fewer_than_n_rules_in_force_and_declined_ones_are_not_suggested(decided):
    assert {s.key for s in suggest_rules(decided, min_count=6)} == {
        "allow prefix git log --oneline -n", "deny prefix rm -rf"}
    rules = RulesPolicy(set(), ["git log"], deny_prefixes=["rm -rf"])
    left = suggest_rules(decided, min_count=6, rules=rules)
    assert left == []
    declined = suggest_rules(decided, min_count=6, declined=["allow prefix git log --oneline -n"])
    assert [s.key for s in declined] == ["deny prefix rm -rf"]


@pytest.fixture
def own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own config file and state dir (kept rules and declines go there)."""
    monkeypatch.setenv("NAVTUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path


def five_of_each(repo: Path, folder: Path) -> None:
    run_plain(repo, folder, [*[(f"git log --oneline -n {k}", "a") for k in range(1, 6)],
                             *[(f"rm -rf build{k}", "r") for k in range(1, 6)]])


async def test_l_shows_the_suggestions_and_kept_ones_apply_now_and_are_saved(
    git_repo: Path, tmp_path: Path, own_state: Path
):
    from agent_core.actions import Bash
    from agent_core.steps import Approve, Reject
    from app.config import load_rules
    from app.screens.rule_suggestions import RuleSuggestionsScreen
    from tests.fixtures.running_app import main_screen, running_app, waiting_on
    from tests.fixtures.tui import make_session, showing
    from widgets.step_timeline import StepTimeline

    five_of_each(git_repo, tmp_path)
    session = make_session(git_repo, [("More log.", Bash("git log --oneline -n 9")),
                                      ("Clean.", Bash("rm -rf build9")), ("Look.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("L")
        await watch.until(lambda: showing(app, RuleSuggestionsScreen), "the suggestions")
        screen = app.screen
        assert [s.key for s in screen.suggestions] == ["allow prefix git log --oneline -n", "deny prefix rm -rf"]
        assert "step 1  approved  git log --oneline -n 1" in str(screen.query_one("#evidence").render())
        assert waiting_on(app, 1) is False  # (the dialog is over it) and nothing was applied yet
        assert session.records == []
        await pilot.press("y")  # keep: allow
        await pilot.press("y")  # keep: deny; the last one closes the dialog
        await watch.until(lambda: waiting_on(app, 3), "proposal 3, the first not a rule's")
        main = main_screen(app)
        first, second = session.records
        assert first.decision == Approve(decided_by="rule") and first.observation is not None
        assert second.decision == Reject(decided_by="rule") and second.observation is None
        entries = main.query_one(StepTimeline).entries
        assert (entries[1].status, entries[2].status) == ("executed", "rejected")
        rules = load_rules()
        assert rules.allow_prefixes == ["git log --oneline -n"] and rules.deny_prefixes == ["rm -rf"]


async def test_a_declined_suggestion_is_not_suggested_again(git_repo: Path, tmp_path: Path, own_state: Path):
    from agent_core.actions import Bash
    from app.config import load_rules
    from app.screens.rule_suggestions import RuleSuggestionsScreen
    from tests.fixtures.running_app import main_screen, running_app
    from tests.fixtures.tui import make_session, showing

    five_of_each(git_repo, tmp_path)
    session = make_session(git_repo, [("Look.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("L")
        await watch.until(lambda: showing(app, RuleSuggestionsScreen), "the suggestions")
        await pilot.press("n", "escape")
        await watch.until(lambda: app.screen is main_screen(app), "closed")
        await pilot.press("L")
        await watch.until(lambda: showing(app, RuleSuggestionsScreen), "the suggestions again")
        assert [s.key for s in app.screen.suggestions] == ["deny prefix rm -rf"]
        await pilot.press("escape")
    assert load_rules().allow_prefixes == [] and not session.records


def test_other_repositories_count_only_with_the_consent_setting(tmp_path: Path, own_state: Path):
    from app import rule_sources
    from tests.fixtures.repos import BUGGY_PROJECT, make_repo

    first, second = make_repo(tmp_path / "a", BUGGY_PROJECT), make_repo(tmp_path / "b", BUGGY_PROJECT)
    five_of_each(first, tmp_path)
    assert rule_sources.repositories(second, everywhere=False) == [second]
    assert rule_sources.decisions(second, everywhere=False) == []
    assert rule_sources.repositories(second, everywhere=True) == [second, first]
    found = suggest_rules(rule_sources.decisions(second, everywhere=True))
    assert [s.key for s in found] == ["allow prefix git log --oneline -n", "deny prefix rm -rf"]


def test_in_tmux_l_keeps_a_suggested_rule_that_then_approves_on_its_own(
    git_repo: Path, tmp_path: Path, own_state: Path, tmux_pane
):
    five_of_each(git_repo, tmp_path)
    script = write_script(tmp_path / "tui.jsonl", ["Thought: log\nAction: bash git log --oneline -n 7",
                                                   "Thought: clean\nAction: bash rm -rf build7",
                                                   "Thought: look\nAction: bash pwd"])
    tmux_pane.start_navtui("--script", str(script), "--issue", "look", str(git_repo), cwd=tmp_path)
    tmux_pane.wait_for("Approve")
    tmux_pane.send("L")
    shown = tmux_pane.wait_for("Rules your decisions suggest")
    assert "5 of 5 times" in shown and "Evidence (5 decisions)" in shown
    tmux_pane.send("y")
    tmux_pane.wait_for("rejected `rm -rf …`")
    tmux_pane.send("n")  # the deny rule: declined
    tmux_pane.wait_for("╭─ Step 2")  # step 1 ran by the kept rule; rm -rf waits for the user
    assert "rm -rf build7" in tmux_pane.screen()
    config = (own_state / "config.toml").read_text()
    assert 'allow_prefixes = ["git log --oneline -n"]' in config and "deny" not in config
    assert (own_state / "state" / "navtui" / "declined-rules.txt").read_text() == "deny prefix rm -rf\n"


def test_plain_applies_deny_rules_and_logs_a_rules_decisions_as_the_rules(git_repo: Path, tmp_path: Path,
                                                                           own_state: Path):
    (own_state / "config.toml").write_text('[rules]\nallow_prefixes = ["ls"]\ndeny_prefixes = ["rm -rf"]\n')
    script = write_script(tmp_path / "s.jsonl", ["Thought: look\nAction: bash ls calc",
                                                 "Thought: clean\nAction: bash ls && rm -rf calc",
                                                 "Thought: mark\nAction: bash touch asked.txt"])
    result = navtui("--plain", "--script", str(script), "--issue", "look", str(git_repo), stdin="a\n")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "step 1 approved without asking: an always-allow rule" in result.stdout
    assert "step 2 rejected without asking: a deny rule" in result.stdout
    assert (git_repo / "calc").is_dir() and (git_repo / "asked.txt").exists()
    log = next(sessions_dir(repo_state_dir(git_repo)).glob("*.jsonl"))
    deciders = [json.loads(line)["record"]["decision"]["decided_by"] for line in log.read_text().splitlines()
                if line.startswith(('{"type": "StepExecuted"', '{"type": "StepRejected"'))]
    assert deciders == ["rule", "rule", "user"]


def test_logs_from_before_decided_by_say_nothing_about_who_decided(git_repo: Path, tmp_path: Path):
    five_of_each(git_repo, tmp_path)
    log = next(sessions_dir(repo_state_dir(git_repo)).glob("*.jsonl"))
    assert len(logged_decisions([git_repo])) == 10
    log.write_text(log.read_text().replace(', "decided_by": "user"', ""))  # as older navtui wrote it
    assert logged_decisions([git_repo]) == []
