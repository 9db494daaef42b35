"""The TUI's session driver: ordered, coalesced events; decisions only for the proposal meant."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from agent_core.actions import Bash
from agent_core.backends.base import Usage
from agent_core.events import StepProposed, TokenStreamed, TurnStarted, UsageReported
from agent_core.steps import Approve, Origin
from agent_core.driver import Close, Decide, EventInbox, SessionDriver, UserCommand
from tests.fixtures.tui import make_session


def drain_until(inbox: EventInbox, seen: list, done, deadline: float,
                thread: threading.Thread | None = None) -> None:
    """Take the inbox's events into `seen` until `done()` holds (before `deadline`, while
    `thread`, if given, is alive)."""
    while not done():
        assert time.monotonic() < deadline and (thread is None or thread.is_alive())
        seen.extend(inbox.drain())
        time.sleep(0.01)


def test_inbox_keeps_order_merges_token_runs_and_wakes_once_per_drain():
    wakes: list[int] = []
    inbox = EventInbox(lambda: wakes.append(1))
    usage = UsageReported(1, Usage(), 10, 100)
    for event in (TurnStarted(1), TokenStreamed(1, "a"), TokenStreamed(1, "b"), usage,
                  TokenStreamed(1, "c"), TokenStreamed(2, "d"), TokenStreamed(2, "e")):
        inbox.put(event)
    assert wakes == [1]
    drained = inbox.drain()
    assert drained == [TurnStarted(1), TokenStreamed(1, "ab"), usage, TokenStreamed(1, "c"),
                       TokenStreamed(2, "de")]
    inbox.put(TokenStreamed(3, "f"))
    assert wakes == [1, 1] and inbox.drain() == [TokenStreamed(3, "f")]


def test_a_partial_drain_takes_live_text_and_keeps_the_rest_in_order():
    wakes: list[int] = []
    inbox = EventInbox(lambda: wakes.append(1))
    usage = UsageReported(1, Usage(), 10, 100)
    inbox.put(TurnStarted(1))
    inbox.put(TokenStreamed(1, "a"))
    assert inbox.drain(live_text=True) == []  # a turn starts: it all waits
    assert inbox.drain() == [TurnStarted(1), TokenStreamed(1, "a")]
    for event in (TokenStreamed(1, "b"), usage, TokenStreamed(1, "c"), usage):
        inbox.put(event)
    assert inbox.drain(live_text=True) == [TokenStreamed(1, "b"), usage, TokenStreamed(1, "c")]
    assert inbox.drain(live_text=True) == []  # no text waits: nothing taken
    inbox.put(TokenStreamed(1, "d"))
    inbox.put(TurnStarted(2))
    assert inbox.drain(live_text=True) == [usage, TokenStreamed(1, "d")]  # the turn's last text
    inbox.put(TokenStreamed(2, "e"))
    assert inbox.drain(live_text=True) == []  # a new turn starts before the text: it all waits
    assert wakes == [1, 1]  # events were left waiting: no new wake
    assert inbox.drain() == [TurnStarted(2), TokenStreamed(2, "e")]
    inbox.put(TokenStreamed(2, "f"))
    assert wakes == [1, 1, 1]


def test_inbox_takes_tokens_from_another_thread_without_losing_any():
    inbox = EventInbox(lambda: None)
    producer = threading.Thread(target=lambda: [inbox.put(TokenStreamed(1, "x")) for _ in range(20_000)])
    producer.start()
    seen = []
    while producer.is_alive():
        seen.extend(e.text for e in inbox.drain())
    producer.join()
    seen.extend(e.text for e in inbox.drain())
    assert "".join(seen) == "x" * 20_000


def test_a_decision_for_another_proposal_is_dropped(git_repo: Path):
    session = make_session(git_repo, [("One.", Bash("echo 1 > one.txt")), ("Two.", Bash("ls"))])
    events: list = []
    driver = SessionDriver(session, EventInbox(lambda: None))
    session.subscribe(events.append)
    session.start()
    assert session.propose() is not None
    driver._apply(Decide(Approve(), 7))
    assert session.pending is not None and not (git_repo / "one.txt").exists()
    driver._apply(Decide(Approve(), 1))
    assert session.pending is None and (git_repo / "one.txt").exists()
    session.close()


def test_own_command_while_a_proposal_waits_keeps_it_pending(git_repo: Path):
    session = make_session(git_repo, [("Make one.", Bash("echo 1 > one.txt")), ("Two.", Bash("ls"))])
    driver = SessionDriver(session, EventInbox(lambda: None))
    thread = threading.Thread(target=driver.run)
    proposals: list[StepProposed] = []
    ready = threading.Event()
    session.subscribe(lambda e: (proposals.append(e), ready.set()) if isinstance(e, StepProposed) else None)
    thread.start()
    assert ready.wait(30)
    ready.clear()
    driver.send(UserCommand("echo mine > mine.txt"))
    assert ready.wait(30)  # the same proposal, announced again under the next step number
    ready.clear()
    assert [r.origin for r in session.records] == [Origin.USER]
    assert (git_repo / "mine.txt").exists() and not (git_repo / "one.txt").exists()
    assert [p.index for p in proposals] == [1, 2] and proposals[1].step is proposals[0].step
    driver.send(Decide(Approve(), 2))  # the model's proposal still runs when approved
    assert ready.wait(30)
    driver.send(Close())
    thread.join(30)
    session.close()
    assert [(r.index, r.origin) for r in session.records] == [(1, Origin.USER), (2, Origin.MODEL)]
    assert (git_repo / "one.txt").read_text() == "1\n"
    assert [p.index for p in proposals] == [1, 2, 3]


def test_the_format_error_stop_reads_right_when_the_dialect_is_auto(git_repo: Path):
    session = make_session(git_repo, ["no action", "still none", "nothing"])
    session.config.dialect = "auto"
    session.config.max_format_errors = 3
    session.start()
    while session.finished is None:
        session.propose()
    session.close()
    message = session.finished.message
    assert session.finished.reason == "format_errors" and "a auto" not in message
    assert "none of the known formats" in message


def test_policy_changes_are_commands_and_the_driver_says_what_it_approved(git_repo: Path):
    from agent_core.driver import Allow, AutoApproved, PolicyChanged, SessionDiffReady, SetAuto

    turns = [("One.", Bash("echo 1 > one.txt")), ("Two.", Bash("echo 2 > two.txt")),
             ("Three.", Bash("git status")), ("Four.", Bash("ls"))]
    session = make_session(git_repo, turns)
    seen: list = []
    arrived = threading.Condition()

    def wake() -> None:
        with arrived:
            seen.extend(inbox.drain())
            arrived.notify_all()

    def wait_for(test, what: str) -> list:
        with arrived:
            assert arrived.wait_for(lambda: test(seen), 30), what
            return list(seen)

    inbox = EventInbox(wake)
    driver = SessionDriver(session, inbox)
    thread = threading.Thread(target=driver.run)
    thread.start()
    try:
        wait_for(lambda s: any(isinstance(e, StepProposed) for e in s), "proposal 1")
        driver.send(Allow(prefix="git status"))
        driver.send(SetAuto(True))
        events = wait_for(lambda s: any(isinstance(e, StepProposed) and e.index == 3 for e in s),
                          "proposal 3 (auto mode ran 1 and 2)")
        changes = [e for e in events if isinstance(e, PolicyChanged)]
        assert [(c.auto, c.rules, c.label) for c in changes] == [(False, 1, "ask (+1 rules)"), (True, 1, "auto")]
        approved = [(e.index, e.reason) for e in events if isinstance(e, AutoApproved)]
        assert approved[:2] == [(1, "auto mode"), (2, "auto mode")]
        proposal_2 = next(i for i, e in enumerate(events) if isinstance(e, StepProposed) and e.index == 2)
        assert events[proposal_2 + 1] == AutoApproved(2, "auto mode")  # sent together, one drain
        events = wait_for(lambda s: any(isinstance(e, SessionDiffReady) and "two.txt" in e.diff for e in s),
                          "the session diff after step 2")
        diffs = [e.diff for e in events if isinstance(e, SessionDiffReady)]
        assert "one.txt" in diffs[-1] and "two.txt" in diffs[-1]
        assert diffs[-1] == session.workspace.diff(0, session.workspace.checkpoints[-1].index)
    finally:
        driver.send(Close())
        thread.join(30)
        session.close()


def test_a_deny_rule_rejects_even_in_auto_mode_and_the_records_say_who_decided(git_repo: Path):
    from agent_core.steps import Reject
    from agent_core.driver import Allow, AutoApproved, SetAuto

    turns = [("Look.", Bash("ls")), ("Clean.", Bash("ls && rm -rf calc")), ("Status.", Bash("git status")),
             ("More.", Bash("pwd"))]
    session = make_session(git_repo, turns)
    inbox = EventInbox(lambda: None)
    driver = SessionDriver(session, inbox)
    thread = threading.Thread(target=driver.run)
    thread.start()
    seen: list = []
    try:
        drain_until(inbox, seen, lambda: session.pending is not None, time.monotonic() + 30)
        driver.send(Decide(Approve(), 1))  # a person's decision
        driver.send(Allow(prefix="rm -rf", deny=True))
        driver.send(Allow(prefix="git status"))
        drain_until(inbox, seen, lambda: session.pending is not None and session.pending.index == 4,
                    time.monotonic() + 30)
        driver.send(SetAuto(True))
        drain_until(inbox, seen, lambda: len(session.records) == 4 and any(
            isinstance(e, AutoApproved) and e.index == 4 for e in seen), time.monotonic() + 30)
        assert [r.decision for r in session.records] == [
            Approve("user"), Reject(decided_by="rule"), Approve("rule"), Approve("auto")]
        assert (git_repo / "calc").is_dir()
        assert [(e.index, e.reason, e.rejected) for e in seen if isinstance(e, AutoApproved)] == [
            (2, "a deny rule", True), (3, "an always-allow rule", False), (4, "auto mode", False)]
    finally:
        driver.send(Close())
        thread.join(30)
        session.close()


def test_auto_mode_diffs_the_session_only_after_steps_that_changed_it_and_at_a_pace(git_repo: Path):
    from agent_core.driver import SessionDiffReady, SessionDiffs
    from agent_core.events import StepExecuted

    turns = [("Look.", Bash("ls")), ("One.", Bash("echo 1 > one.txt")), ("Look.", Bash("ls")),
             ("Two.", Bash("echo 2 > two.txt")), ("Look.", Bash("cat one.txt"))]
    turns += [(f"Edit {n}.", Bash(f"echo {n} >> one.txt")) for n in range(12)]
    session = make_session(git_repo, turns)
    computed: list[tuple[int, int]] = []
    real_diff = session.workspace.diff

    def counted(first: int, last: int) -> str:
        computed.append((first, last))
        return real_diff(first, last)

    session.workspace.diff = counted
    seen: list = []
    inbox = EventInbox(lambda: None)
    driver = SessionDriver(session, inbox, auto=True)
    driver.diffs = SessionDiffs(session, inbox, pace=2.0)
    thread = threading.Thread(target=driver.run)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        drain_until(inbox, seen, lambda: any(isinstance(e, StepExecuted) and e.record.index == len(turns)
                                             for e in seen), deadline, thread)
        last = session.workspace.checkpoints[-1].index
        drain_until(inbox, seen, lambda: computed and computed[-1] == (0, last) and sum(
            isinstance(e, SessionDiffReady) for e in seen) == len(computed), deadline)
    finally:
        driver.send(Close())
        thread.join(30)
    executed = [e for e in seen if isinstance(e, StepExecuted)]
    changed = [e for e in executed if e.record.diff]
    assert len(changed) == 14 and len(executed) == len(turns)
    # 14 steps changed the tree, far faster than one every 2 s: the diffs kept to their pace
    assert len(computed) < len(changed), computed
    diffs = [e.diff for e in seen if isinstance(e, SessionDiffReady)]
    assert diffs[-1] == real_diff(0, last) and "two.txt" in diffs[-1]
    session.close()


def test_in_auto_mode_a_session_diff_no_one_sees_waits_for_the_slow_pace_until_it_is_shown(git_repo: Path):
    from agent_core.driver import SessionDiffReady, SessionDiffs
    from agent_core.events import StepExecuted

    turns = [(f"Edit {n}.", Bash(f"echo {n} >> one.txt")) for n in range(6)]
    session = make_session(git_repo, turns)
    computed: list[tuple[int, int]] = []
    real_diff = session.workspace.diff
    session.workspace.diff = lambda first, last: (computed.append((first, last)), real_diff(first, last))[1]
    seen: list = []
    inbox = EventInbox(lambda: None)
    driver = SessionDriver(session, inbox, auto=True)
    driver.diffs = SessionDiffs(session, inbox, pace=0.0, unseen_pace=600.0)
    driver.diffs.set_auto(True)
    thread = threading.Thread(target=driver.run)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        drain_until(inbox, seen, lambda: any(isinstance(e, StepExecuted) and e.record.index == len(turns)
                                             for e in seen), deadline, thread)
        time.sleep(0.3)
        seen.extend(inbox.drain())
        # six steps changed the tree; unseen, only the first diff ran (the next waits 600 s)
        assert len(computed) == 1
        driver.show_session_diff(True)  # the user turns to the session diff: it runs now
        last = session.workspace.checkpoints[-1].index
        drain_until(inbox, seen, lambda: sum(isinstance(e, SessionDiffReady) for e in seen) >= 2, deadline)
        assert computed == [(0, 1), (0, last)]
        assert [e for e in seen if isinstance(e, SessionDiffReady)][-1].diff == real_diff(0, last)
    finally:
        driver.send(Close())
        thread.join(30)
        session.close()
