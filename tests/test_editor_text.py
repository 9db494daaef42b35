"""SWE-agent's str_replace_editor answers, reproduced: clip note, filemap (via ast), snippets."""

from __future__ import annotations

from agent_core.executor import editor_text


def test_cat_n_numbers_every_split_line_and_clips_at_16000():
    assert editor_text.cat_n("a\n\tb\n", "f.py") == (
        "Here's the result of running `cat -n` on f.py:\n     1\ta\n     2\t        b\n     3\t\n"
    )
    clipped = editor_text.cat_n("x" * 16_001, "f.py")
    assert clipped.endswith("x" * 10 + editor_text.TRUNCATED_MESSAGE + "\n")


def test_filemap_elides_long_function_bodies_nested_ones_too():
    source = "\n".join([
        "import os",
        "def short():",
        "    return 1",
        "class A:",
        "    async def long(self):",
        "        a = 1",
        "        def inner():",
        "            x = 1",
        "            y = 2",
        "            z = 3",
        "            w = 4",
        "            v = 5",
        "            return x + y + z + w + v",
        "        return inner",
        "X = 1",
    ])
    assert editor_text.filemap(source) == "\n".join([
        "     1 import os",
        "     2 def short():",
        "     3     return 1",
        "     4 class A:",
        "     5     async def long(self):",
        "     6 ... eliding lines 6-14 ...",
        "     8 ... eliding lines 8-13 ...",  # SWE-agent elides (and notes) nested bodies too
        "    15 X = 1",
    ])


def test_large_python_file_is_abbreviated_unless_it_does_not_parse():
    body = "".join(f"def f{n}():\n" + "    x = 1\n" * 6 + "    return x\n" for n in range(300))
    view = editor_text.file_view(body, "/testbed/big.py", None)
    assert view.startswith(editor_text.FILEMAP_NOTE + "\n     1 def f0():\n     2 ... eliding lines 2-8 ...\n")
    assert view.endswith(editor_text.FILEMAP_END + "\n")
    broken = body + "def (:\n"
    assert editor_text.file_view(broken, "/testbed/big.py", None).startswith("Here's the result of")
    assert editor_text.file_view(body, "/testbed/big.txt", None).startswith("Here's the result of")


def test_str_replace_snippet_is_swe_agents_window():
    before = "".join(f"line {n}\n" for n in range(1, 21))
    after = before.replace("line 10\n", "changed 10\nadded\n")
    reply = editor_text.str_replace_reply("/testbed/f", before, after, "line 10\n", "changed 10\nadded\n")
    shown = [line.split("\t")[0].strip() for line in reply.splitlines()[1:-1]]
    # the change starts on line 10 (index 9): lines 5..15 (9 - 4 .. 9 + 4 + 2 newlines)
    assert shown == [str(n) for n in range(5, 16)]
    assert reply.startswith("The file /testbed/f has been edited. Here's the result of running "
                            "`cat -n` on a snippet of /testbed/f:\n     5\tline 5\n")
    assert reply.endswith(editor_text.EDITED_TAIL)


def test_insert_snippet_and_tail_text():
    after = "".join(f"line {n}\n" for n in range(1, 11)).replace("line 5\n", "line 5\nnew\n")
    reply = editor_text.insert_reply("/testbed/f", after, 5, 1)
    assert reply.startswith("The file /testbed/f has been edited. Here's the result of running "
                            "`cat -n` on a snippet of the edited file:\n     2\tline 2\n")
    assert "     6\tnew\n" in reply and "    10\tline 9\n" in reply and "line 10" not in reply
    assert reply.endswith("Review the changes and make sure they are as expected (correct "
                          "indentation, no duplicate lines, etc). Edit the file again if necessary.")
