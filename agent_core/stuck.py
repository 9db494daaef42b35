"""Notice when the model goes round in circles (the idea of OpenHands' stuck detector).

The session reports each turn: an executed action with its observation, a rejected action with
the user's feedback, or a reply that could not be parsed. A turn is *stuck* when

* the same action comes 3 times in a row,
* the same action gets the same observation (or the same rejection) twice in a row,
* two actions alternate A, B, A, B, A, B,
* an unparseable reply copies the format error's own words (its example's header or tool line:
  `agent_core.formats.examples`) instead of acting, or repeats the previous unparseable reply
  word for word (a model that copies the example's action as it is runs a valid action, and
  repeating it is caught as a repeated action),
* a command quotes the user's rejection feedback (`echo "..."`) instead of acting on it.

Each stuck turn yields one sentence for the model ("You repeated ...; try something else.") and
counts towards `count`; the session shows it to the user too and may stop after a limit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agent_core.actions import Action, Bash, action_to_dict
from agent_core.formats.examples import EXAMPLE_HEADER, TOOLS_LEAD
from agent_core.steps import Observation

SAME_ACTION_RUN = 3
ALTERNATION_RUN = 6
# Feedback shorter than this is too generic ("no", "wrong") to count as echoed.
MIN_ECHOED_FEEDBACK = 8
TRY_ELSE = "try something else"
# How the lines of a format error's own words begin (its example's header and tool line): no
# action holds them, so a reply with one echoes the error instead of acting.
ERROR_WORDS = (EXAMPLE_HEADER, TOOLS_LEAD)


@dataclass(frozen=True)
class _Turn:
    action: str  # canonical form of the action; "" for a reply that could not be parsed
    outcome: str  # observation, "rejected: feedback", or the unparseable reply itself


def action_key(action: Action) -> str:
    """The same string for the same action, whatever dialect it was written in."""
    return json.dumps(action_to_dict(action), sort_keys=True, ensure_ascii=False)


def describe(action: Action, limit: int = 80) -> str:
    """A short, one-line label of `action` for messages."""
    if isinstance(action, Bash):
        text = f"bash `{action.command.strip()}`"
    else:
        fields = {k: v for k, v in action_to_dict(action).items() if k != "kind"}
        text = f"{action.kind} {json.dumps(fields, ensure_ascii=False)}"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def observation_key(observation: Observation | None) -> str:
    if observation is None:
        return ""
    return f"{observation.exit_code}\0{observation.error}\0{observation.output}"


def echoes(command: str, feedback: str) -> bool:
    """True when `command` quotes the user's feedback (`echo "do not ..."`), rather than running
    a command the user suggested."""
    if len(feedback) < MIN_ECHOED_FEEDBACK:
        return False
    return any(quote + feedback in command for quote in ("'", '"'))


class StuckDetector:
    """Keeps the recent turns of one session and says when the latest one repeats itself."""

    def __init__(self) -> None:
        self.count = 0
        self._turns: list[_Turn] = []
        self._actions: dict[str, Action] = {}
        self._feedback = ""

    def reset(self) -> None:
        """Forget the history (after an undo the conversation changed)."""
        self._turns.clear()
        self._feedback = ""

    def executed(self, action: Action, observation: Observation | None) -> str | None:
        """Report an executed action; the notice for the model when it repeats itself."""
        return self._action_turn(action, "observed: " + observation_key(observation))

    def rejected(self, action: Action, feedback: str) -> str | None:
        """Report an action the user rejected (with their feedback)."""
        notice = self._action_turn(action, "rejected: " + feedback.strip())
        if feedback.strip():
            self._feedback = feedback.strip()
        return notice

    def format_error(self, raw: str) -> str | None:
        """Report a reply that could not be parsed."""
        previous = self._turns[-1] if self._turns else None
        self._turns.append(_Turn("", raw.strip()))
        copied = [line.strip() for line in raw.splitlines() if line.strip().startswith(ERROR_WORDS)]
        if copied:
            return self._stuck(
                f"You repeated the format error's words ({copied[0][:60]!r}) instead of acting: "
                "write your own reasoning, then one action with a real tool and its arguments; "
                f"{TRY_ELSE}."
            )
        if previous is not None and previous == self._turns[-1]:
            return self._stuck(f"You repeated the same unparseable reply; {TRY_ELSE}.")
        return None

    def _action_turn(self, action: Action, outcome: str) -> str | None:
        key = action_key(action)
        self._actions[key] = action
        self._turns.append(_Turn(key, outcome))
        if isinstance(action, Bash) and echoes(action.command, self._feedback):
            return self._stuck(
                f"You repeated the user's feedback ({self._feedback[:60]!r}) as a command; it is advice "
                f"for you, not a command to run. Act on it; {TRY_ELSE}."
            )
        turns = [turn for turn in self._turns if turn.action]
        label = describe(action)
        if len(turns) >= 2 and turns[-1] == turns[-2]:
            return self._stuck(
                f"You repeated {label} and got the same result as the last time; {TRY_ELSE}."
            )
        last = [turn.action for turn in turns[-SAME_ACTION_RUN:]]
        if len(last) == SAME_ACTION_RUN and len(set(last)) == 1:
            return self._stuck(
                f"You repeated {label} {SAME_ACTION_RUN} times in a row; {TRY_ELSE}."
            )
        run = [turn.action for turn in turns[-ALTERNATION_RUN:]]
        if len(run) == ALTERNATION_RUN and run[0] != run[1] and run == run[:2] * (
            ALTERNATION_RUN // 2
        ):
            other = describe(self._actions[run[-2]])
            return self._stuck(
                f"You repeated the same two actions in turn ({other} and {label}) "
                f"{ALTERNATION_RUN // 2} times; {TRY_ELSE}."
            )
        return None

    def _stuck(self, message: str) -> str:
        self.count += 1
        return message
