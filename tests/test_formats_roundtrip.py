"""Property: `parse(render(a, d), d).action == a` for every kind each dialect expresses."""

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core.actions import Bash, Edit, Read, Search, StrReplaceEditor, Submit
from agent_core.formats import detect_dialect, parse, parses, render
from agent_core.formats import text as text_dialect

# Pieces that stress each syntax: quotes, tags, markers, indentation, line breaks.
FRAGMENTS = [
    "\n", "  ", "\t", "'", '"', "\\", "{", "}", "[1, 2]", "```", "$", "&&", "|", "#",
    "<function=bash>", "</function>", "<parameter=x>", "<tool_call>", "</tool_call>",
    "<think>", "</think>", "Action:", "Thought:", "Observation:", " /", ".py", "é", "日本",
]
pieces = st.one_of(st.text(max_size=6), st.sampled_from(FRAGMENTS))
raw_text = st.lists(pieces, max_size=8).map("".join)
line = raw_text.map(lambda s: s.replace("\n", " ").replace("\r", " "))
nonblank = raw_text.filter(lambda s: s.strip() != "")


def text_safe(value: str) -> bool:
    """No line that the text dialect reads as the end of an action."""
    return text_dialect.END_LINE.search(value) is None


def no_param_close(value: str) -> bool:
    return "</parameter>" not in value


# text dialect
text_bash = nonblank.map(str.strip).filter(
    lambda c: c and text_safe(c) and not text_dialect.FENCE.match(c)
    and text_dialect.bash_command(" " + c) == c  # one line, or lines the command continues onto
).map(Bash)
one_line = line.filter(lambda s: s.strip() != "" and "\x0b" not in s)
text_read = one_line.map(Read)
text_search = st.builds(Search, pattern=one_line, path=st.none() | one_line)
text_edit = st.builds(
    lambda path, start, extra, content: Edit(path, start, start - 1 + extra, content),
    one_line,
    st.integers(1, 10_000),
    st.integers(0, 50),
    raw_text.filter(text_safe),
)
text_actions = st.one_of(text_bash, text_read, text_search, text_edit, st.just(Submit()))


def editor(value: st.SearchStrategy[str]) -> st.SearchStrategy[StrReplaceEditor]:
    maybe = st.none() | value
    ints = st.integers(-5, 100_000)
    return st.one_of(
        st.builds(StrReplaceEditor, command=st.just("view"), path=value,
                  view_range=st.none() | st.lists(ints, min_size=2, max_size=2)),
        st.builds(StrReplaceEditor, command=st.just("create"), path=value, file_text=value),
        st.builds(StrReplaceEditor, command=st.just("str_replace"), path=value, old_str=value,
                  new_str=maybe),
        st.builds(StrReplaceEditor, command=st.just("insert"), path=value, new_str=value,
                  insert_line=st.integers(0, 100_000)),
        st.builds(StrReplaceEditor, command=st.just("undo_edit"), path=value),
    )


toolcall_actions = st.one_of(
    nonblank.map(Bash), editor(raw_text), st.builds(Submit, result=st.none() | raw_text)
)

xml_value = raw_text.filter(no_param_close)
xml_actions = st.one_of(
    nonblank.filter(no_param_close).map(Bash),
    editor(xml_value),
    st.builds(Search, pattern=xml_value.filter(bool), path=st.none() | xml_value.filter(bool)),
    st.builds(Submit, result=st.none() | xml_value),
)


def thought_for(dialect: str) -> st.SearchStrategy[str]:
    banned = {
        "text": lambda t: text_safe(t),
        "toolcall": lambda t: not any(m in t for m in ("<tool_call>", "<think>", "</think>")),
        "xml": lambda t: "<function" not in t,
    }[dialect]
    return raw_text.filter(banned)


@settings(max_examples=400, deadline=None)
@given(action=text_actions, thought=thought_for("text"))
def test_text_round_trip(action, thought):
    step = parse(render(action, "text", thought), "text")
    assert step.action == action
    assert step.thought == thought.strip()
    assert step.notice is None


@settings(max_examples=400, deadline=None)
@given(action=toolcall_actions, thought=thought_for("toolcall"))
def test_toolcall_round_trip(action, thought):
    step = parse(render(action, "toolcall", thought), "toolcall")
    assert step.action == action
    assert step.thought == thought.strip()
    assert step.notice is None


@settings(max_examples=400, deadline=None)
@given(action=xml_actions, thought=thought_for("xml"))
def test_xml_round_trip(action, thought):
    step = parse(render(action, "xml", thought), "xml")
    assert step.action == action
    assert step.thought == thought.strip()
    assert step.notice is None


@settings(max_examples=200, deadline=None)
@given(action=st.one_of(text_actions, toolcall_actions, xml_actions))
def test_auto_detects_the_dialect_a_render_came_from(action):
    for dialect in ("text", "toolcall", "xml"):
        try:
            raw = render(action, dialect)
        except ValueError:
            continue
        if dialect == "text" and detect_dialect(raw) is None:
            # A text action that also holds a runnable call of another dialect is ambiguous.
            assert any(parses(raw, other) for other in ("toolcall", "xml"))
            continue
        # `Submit.result` has no text form (documented in agent_core.formats.text).
        expected = Submit() if dialect == "text" and isinstance(action, Submit) else action
        assert parse(raw, "auto").action == expected
