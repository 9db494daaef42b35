"""`grep -rn` over the repository (skipping .git and binary files), with a capped result."""

from __future__ import annotations

import subprocess

from agent_core.executor.paths import Confinement, PathError, refuse_unusable
from agent_core.steps import Observation

MATCH_LIMIT = 100
MATCH_CHAR_LIMIT = 300


def search(
    paths: Confinement,
    pattern: str,
    raw_path: str | None = None,
    *,
    limit: int = MATCH_LIMIT,
    timeout: float = 60.0,
) -> Observation:
    """Matching lines as `path:line:text`; past `limit`, the rest is only counted."""
    if not pattern:
        return Observation(output="", error="empty search pattern; give a text or regex to find")
    try:
        refuse_unusable(pattern, "search pattern")
        target = paths.resolve(raw_path or ".")
    except PathError as exc:
        return Observation(output="", error=str(exc))
    if not target.exists():
        return Observation(output="", error=f"{raw_path} does not exist; search `.` (the whole "
                           "repository) or an existing directory")
    where = paths.display(target)
    command = ["grep", "-rnIH", "--exclude-dir=.git", "-e", pattern, "--", where]
    with subprocess.Popen(
        command, cwd=paths.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        kept: list[str] = []
        total = 0
        for raw in proc.stdout:
            total += 1
            if len(kept) < limit:
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                if line.startswith("./"):
                    line = line[2:]
                if len(line) > MATCH_CHAR_LIMIT:
                    line = line[:MATCH_CHAR_LIMIT] + " [... line cut]"
                kept.append(line)
        errors = proc.stderr.read().decode("utf-8", errors="replace").strip()
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    if code == 1 and not kept:
        return Observation(output=f"No matches found for {pattern!r} in {where}", exit_code=1)
    if code not in (0, 1) and not kept:
        return Observation(output="", exit_code=code,
                           error=f"grep failed: {errors or 'exit code ' + str(code)}; note that the "
                           "pattern is a basic regular expression (escape special characters)")
    header = f"Found {total} matching line(s) for {pattern!r} in {where}:\n"
    body = "".join(f"{line}\n" for line in kept)
    cut = total - len(kept)
    footer = (f"[{cut} more matching line(s) cut; showing the first {len(kept)}. Narrow the pattern "
              "or search a subdirectory.]\n") if cut else ""
    return Observation(output=header + body + footer, exit_code=0, truncated=bool(cut))
