"""What each dialect's model reads: system prompt, issue, past turns, observations.

`build_prompt(dialect, issue, turns, profile=...)` gives a `Prompt` with the dialect's stop
strings. The layout is the dialect's (`Dialect.build_prompt`: one completion text for `text`,
chat messages for `toolcall` and `xml`); the words are the prompt profile's
(`agent_core.profiles`: `swesmith` by default for toolcall and xml, `r2e-card` for text). A
`Turn` is one past exchange: the model's raw text and the observation text that followed it,
already made by one of the `format_*` functions below. A turn with an empty `assistant` is the
user speaking between model turns (a message, or a command they ran): only its observation is
sent.

Observations follow the profile: its envelope (`OBSERVATION:\\n...` for swesmith), its text for
an empty output, its line ending, an exit status line only where the profile has one, and
SWE-agent's clipping note past `max_observation_length` characters. Paths are shown as the model
knows them (`to_model`, from the executor's `PathMap`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent_core.actions import Action
from agent_core.formats import DIALECTS, Turn, get_dialect
from agent_core.formats.errors import ParseError
from agent_core.formats.examples import REPO_PATH, Example, ToolWords, build_example
from agent_core.formats.prompting import LEADING_THOUGHT, chat_messages, completion_text
from agent_core.profiles import Profile, ProfileError, load_profile
from agent_core.prompt_types import Prompt
from agent_core.steps import Observation

__all__ = [
    "LEADING_THOUGHT",
    "Profile",
    "Turn",
    "build_prompt",
    "format_example",
    "format_observation",
    "format_parse_error",
    "parse_error_turn",
    "format_rejection",
    "format_user_command",
    "format_user_message",
    "check_profile",
    "profile_for",
    "submit_review_text",
]

ProfileChoice = Profile | str | None
ToModel = Callable[[str], str]

TOOLS = load_profile("swesmith").tools
TOOLCALL_SYSTEM = load_profile("swesmith").render("system_template", "toolcall")
SILENT_SUCCESS = load_profile("swesmith").render("next_step_no_output_template")


# The templates every session renders, in its dialect's variant or the plain one. (The system
# prompt only chat layouts render; the clipping note only a profile that clips.)
NEEDED_TEMPLATES = (
    "instance_template", "next_step_template", "next_step_no_output_template",
    "format_error_template", "rejection_template", "user_message_template", "user_command_template",
)


def profile_for(dialect: str, profile: ProfileChoice = None) -> Profile:
    """`profile` itself, the profile it names (checked, see `check_profile`), or the dialect's
    default one."""
    if isinstance(profile, Profile):
        return profile
    return check_profile(profile or get_dialect(dialect).default_profile, dialect)


def check_profile(spec: str, dialect: str | None = None) -> Profile:
    """The profile `spec`; ProfileError when one of its templates is for a dialect that does not
    exist, or when it lacks a template a session in `dialect` renders (None: not known yet)."""
    chosen = load_profile(spec)
    unknown = sorted(chosen.dialect_variants - set(DIALECTS))
    if unknown:
        raise ProfileError(
            f"prompt profile {chosen.name!r}: templates for no dialect ({', '.join(unknown)}): a "
            f"template key is a template name, or one followed by _{' or _'.join(DIALECTS)}"
        )
    needed = [*NEEDED_TEMPLATES]
    if chosen.max_observation_length:
        needed.append("next_step_truncated_observation_template")
    missing = [key for key in needed if not chosen.has_template(key, dialect)]
    if dialect in DIALECTS and missing:
        raise ProfileError(
            f"prompt profile {chosen.name!r} has no {', '.join(missing)} for the {dialect} dialect: "
            "add them under `templates:`, or extend a profile that has them (`extends: swesmith`)"
        )
    return chosen


def build_prompt(
    dialect: str,
    issue: str,
    turns: list[Turn],
    *,
    max_new_tokens: int = 1024,
    repo_path: str = "/testbed",
    profile: ProfileChoice = None,
) -> Prompt:
    """The whole prompt for the next model turn, with the dialect's stop strings.

    `repo_path` is the directory the instance template names (the path alias).
    """
    found = get_dialect(dialect)
    prompt = Prompt(
        stop_after=list(found.stop_after),
        stop_before=list(found.stop_before),
        max_new_tokens=max_new_tokens,
    )
    found.build_prompt(prompt, profile_for(dialect, profile), dialect, issue, turns, repo_path)
    return prompt


def observation_text(action: Action | None, observation: Observation, profile: Profile) -> str:
    """Output and error, and an exit status line where the profile shows one."""
    parts = [p for p in (observation.output.rstrip("\n"), observation.error or "") if p.strip()]
    code = observation.exit_code
    line = profile.exit_code_line(code) if code not in (0, None) else None
    if line:
        parts.append(line)
    return "\n".join(parts)


def envelope(
    profile: Profile, dialect: str, body: str, total_chars: int | None = None, *, clip: bool = True
) -> str:
    """`body` as the model reads an observation: the no-output text when empty, else the
    profile's line endings in the envelope, clipped (`clip`) with SWE-agent's note when longer
    than the profile's `max_observation_length` (or when the whole output had `total_chars`)."""
    body = body.rstrip()
    if not body.strip():
        return profile.render("next_step_no_output_template", dialect)
    if profile.line_ending != "\n":
        body = body.replace("\r\n", "\n").replace("\n", profile.line_ending)
    limit = profile.max_observation_length
    length = max(len(body), total_chars or 0)
    if clip and limit and length > limit:
        return profile.render(
            "next_step_truncated_observation_template",
            dialect,
            observation=body,
            max_observation_length=limit,
            elided_chars=length - limit,
        )
    return profile.render("next_step_template", dialect, observation=body)


def wrap(dialect: str, body: str, profile: ProfileChoice = None) -> str:
    """The observation envelope of the dialect's (default) profile around `body`, unclipped."""
    return envelope(profile_for(dialect, profile), dialect, body, clip=False)


def with_notice(body: str, notice: str | None) -> str:
    return body if not notice else f"{body}\n\n{notice}"


def format_observation(
    dialect: str,
    action: Action | None,
    observation: Observation,
    *,
    notice: str | None = None,
    profile: ProfileChoice = None,
    to_model: ToModel | None = None,
) -> str:
    """What the model reads after `action` ran; `notice` is `ProposedStep.notice`, if any."""
    chosen = profile_for(dialect, profile)
    body = observation_text(action, observation, chosen)
    if to_model is not None:
        body = to_model(body)
    total = observation.total_chars if observation.truncated else None
    return envelope(chosen, dialect, with_notice(body, notice), total)


def submit_review_text(message: str, diff: str, issue: str) -> str:
    """A review message filled in the way SWE-agent's review_on_submit_m does it:
    `{{diff}}` and `{{problem_statement}}` replaced, printed with a final newline."""
    return message.replace("{{diff}}", diff).replace("{{problem_statement}}", issue) + "\n"


def format_parse_error(
    dialect: str, error: ParseError, profile: ProfileChoice = None, example: Example | None = None,
) -> str:
    """What the model reads when its reply could not be used: the problem and `example` (by
    default the dialect's own)."""
    text = parse_error_text(error, example) if example is not None else str(error)
    return profile_for(dialect, profile).render("format_error_template", dialect, error=text)


def parse_error_turn(
    dialect: str, error: ParseError, profile: ProfileChoice, repo_path: str,
) -> tuple[str, str]:
    """A session's format error: (what was wrong with the example built from its profile, as
    the user is shown it; the observation the model reads)."""
    example = format_example(dialect, profile, repo_path)
    return (parse_error_text(error, example),
            format_parse_error(dialect, error, profile, example))


def parse_error_text(error: ParseError, example: Example) -> str:
    """What was wrong with a reply, then `example` (a session's, built from its profile)."""
    return f"{error.problem}\n{example.text}"


# Said after a first reply that is prose with no action at all (generic chat models explain the
# fix instead of making it). navtui's own words.
PROSE_NUDGE = (
    "Your reply was prose with no action, and here nothing happens without one: nothing you "
    "write outside an action is run or changed. Work through actions, one per reply (look at the "
    "files, edit them, run the tests), and call submit once the fix is made."
)


# What an attempt at an action in any dialect starts with (a call that failed is no prose).
ACTION_ATTEMPT = re.compile(r'<tool_call|<function|\{\s*"(?:name|arguments)"|^\s*Action\b', re.M)


def first_reply_nudge(raw: str, first: bool) -> str | None:
    """`PROSE_NUDGE` for the session's `first` reply when it is prose: no attempt at an action
    in any format."""
    return PROSE_NUDGE if first and not ACTION_ATTEMPT.search(raw) else None


def format_example(dialect: str, profile: ProfileChoice = None, repo_path: str = REPO_PATH) -> Example:
    """The example a format error shows a session's model: a complete reply in `dialect` on
    `repo_path`, naming the tools its prompt offers (the profile's, where the prompt carries
    them; else the dialect's own)."""
    chosen = get_dialect(dialect)
    offered = [ToolWords(tool.name, tuple(argument.name for argument in tool.arguments))
               for tool in profile_for(dialect, profile).spec.tools
               if chosen.profile_tools and tool.name in chosen.kinds]
    return build_example(chosen.render, offered or chosen.tools, repo_path)


def format_rejection(dialect: str, feedback: str, profile: ProfileChoice = None) -> str:
    """What the model reads when the user rejected its action (with their feedback, if any)."""
    return profile_for(dialect, profile).render(
        "rejection_template", dialect, feedback=feedback.strip()
    )


def format_user_message(dialect: str, text: str, profile: ProfileChoice = None) -> str:
    """A message the user typed to the model between turns."""
    return profile_for(dialect, profile).render("user_message_template", dialect, message=text.strip())


def format_user_command(
    dialect: str,
    command: str,
    observation: Observation,
    profile: ProfileChoice = None,
    to_model: ToModel | None = None,
) -> str:
    """A shell command the user ran themselves, with its result."""
    chosen = profile_for(dialect, profile)
    body = observation_text(None, observation, chosen) or SILENT_SUCCESS
    if to_model is not None:
        body = to_model(body)
    return chosen.render("user_command_template", dialect, command=command, observation=body)


# Shapes other modules export (agent_core.exports): the default profiles' prompts.
def text_prompt(issue: str, turns: list[Turn], profile: ProfileChoice = None) -> str:
    return completion_text(profile_for("text", profile), "text", issue, turns, "/testbed")


def toolcall_messages(issue: str, turns: list[Turn], profile: ProfileChoice = None) -> list[dict]:
    from agent_core.formats.toolcall import span

    chosen = profile_for("toolcall", profile)
    return chat_messages(chosen, "toolcall", issue, turns, "/testbed", lambda t: span(t) is not None)


# --- notes about context trimmed to fit the window (agent_core.context) ---------------------------


def omitted_lines_note(lines: int) -> str:
    """Stands where whole lines of a long observation were cut out."""
    return f"[{lines} lines omitted]"


def omitted_chars_note(chars: int) -> str:
    """Stands where part of a very long line was cut out."""
    return f"[{chars} characters omitted]"


def elided_turns_note(turns: int, lines: int) -> str:
    """Replaces the oldest turns once they no longer fit in the context window."""
    return (
        f"[{turns} earlier step(s) omitted to fit the context window "
        f"({lines} lines of your replies and their observations)]"
    )
