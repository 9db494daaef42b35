"""Issue 34, reproduction 6: every command navtui prints for the user to run is shell-quoted,
so a name the model chose (`x$(touch pwned)`) is data when the command is pasted."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from agent_core.workspace import Workspace
from tests.test_workspace_support import bash

HOSTILE = "x$(touch pwned)"


def commands_in(lines: list[str]) -> list[str]:
    return [m for line in lines for m in re.findall(r"`([^`]*)` puts it back", line)]


def test_the_put_back_command_of_a_quarantined_hook_runs_no_code_when_pasted(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    hook = git_repo / ".git" / "hooks" / HOSTILE
    bash(git_repo, f"printf '#!/bin/sh\\necho planted\\n' > '.git/hooks/{HOSTILE}'"
                   f" && chmod +x '.git/hooks/{HOSTILE}'")
    ws.checkpoint(1)
    assert not hook.exists()  # quarantined
    commands = commands_in(ws.git_warnings())
    assert commands, "a put-back command is printed"
    for command in commands:
        subprocess.run(["bash", "-c", command], cwd=git_repo, check=True)
    assert not (git_repo / "pwned").exists(), commands
    assert hook.read_text() == "#!/bin/sh\necho planted\n"
    ws.close()


def test_other_printed_commands_take_a_hostile_name_as_one_word(tmp_path: Path):
    """Names that come from a log, a flag or the model are one shell word in the commands
    navtui prints: the model's name, a repository path, a session id, a branch."""
    import shlex

    from agent_core.backends.hf_load import fetch_hint
    from agent_core.backends.openai_http import server_hint
    from agent_core.git.process.repo import find_repo
    from agent_core.workspace import WorkspaceError

    def words(text: str) -> list[list[str]]:
        return [shlex.split(command) for command in re.findall(r"`([^`]*)`", text)]

    assert ["hf", "download", HOSTILE] in words(fetch_hint(HOSTILE))
    assert ["vllm", "serve", HOSTILE, "--port", "8000"] in words(server_hint(HOSTILE))
    bare = tmp_path / HOSTILE
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    try:
        find_repo(bare)
    except WorkspaceError as error:
        assert ["git", "clone", str(bare), f"{HOSTILE}-work"] in words(str(error))
    else:
        raise AssertionError("a bare repository is refused")
