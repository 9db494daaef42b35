"""navtui headless against mini-swe-agent 2.x: the same 50 commands on the same repository.

    python bench/vs_mini.py [--files 10000] [--commands 50] [--runs 3] [--mini-version 2.4.6]
                            [--cache DIR]

mini-swe-agent is installed from PyPI into the bench's own virtual environment (under --cache,
default ~/.cache/navtui-bench/mini-VERSION; never the project's environment) and run as its
`mini` command with its deterministic model (`--model-class deterministic`: the scripted
outputs, each one bash command), `-y --exit-immediately`, on a copy of the repository.
navtui runs as `navtui --auto --script S --sandbox off` (the replay backend; mini runs commands
without a sandbox too) on another copy: every step runs the command in navtui's persistent
shell and checkpoints the tree in git, the log and transcript written as in any session.

The commands are reads and writes (grep, sed -i, echo >>, ls) of the generated repository
(`step_overhead.generate_repo`: ~4 KB Python files, committed and packed), the same list for
both, then each tool's submit (navtui's `submit` action; mini's `echo
COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`). A submit-only session of each is timed too (start-up:
imports, repository checks, the first prompt). Per step = (the 50-command session's time - the
submit-only session's time) / 50. Wall time from spawn to exit, and CPU time (user + system of
the process and its children, from wait4), output to /dev/null, runs alternated (after one
uncounted run of each that fills the bytecode caches: navtui's under a temporary directory, as
an install would have them); medians.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.dont_write_bytecode = True
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

from step_overhead import copy_repo, generate_repo  # noqa: E402
from terminal import PYCACHE  # noqa: E402

SUBMIT_MINI = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
ISSUE = "bench: average is off by one"


def mini_environment(cache: Path, version: str) -> Path:
    """The `mini` executable of mini-swe-agent `version` in its own venv under `cache`."""
    venv = cache / f"mini-{version}"
    mini = venv / "bin" / "mini"
    if not mini.exists():
        print(f"installing mini-swe-agent=={version} into {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"mini-swe-agent=={version}"], check=True)
    return mini


def commands(names: list[str], count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    chosen = []
    for step in range(count):
        name = rng.choice(names)
        number = int(name[-8:-3])
        chosen.append(rng.choice([
            f"grep -n 'return' {name} | head -5",
            f"sed -i 's/x + {number}/x - {number}/' {name}",
            f"echo '# note {step}' >> {name}",
            f"ls {name.rsplit('/', 1)[0]} | head -3",
        ]))
    return chosen


def navtui_script(path: Path, bash: list[str]) -> Path:
    from agent_core.actions import Bash, Submit
    from agent_core.formats import render

    actions = [*(Bash(c) for c in bash), Submit()]
    path.write_text("".join(json.dumps({"output": render(a, "toolcall", f"Step {n}.")}) + "\n"
                            for n, a in enumerate(actions)))
    return path


def mini_config(path: Path, bash: list[str], repo: Path) -> Path:
    """mini's config: its deterministic model's outputs and the working directory (JSON is YAML)."""
    outputs = [{"role": "assistant", "content": f"Step {n}.",
                "extra": {"actions": [{"command": c}], "cost": 0.0}}
               for n, c in enumerate([*bash, SUBMIT_MINI])]
    config = {"model": {"model_class": "deterministic", "model_name": "deterministic", "outputs": outputs},
              "environment": {"environment_class": "local", "cwd": str(repo)},
              "agent": {"step_limit": 0, "cost_limit": 0}}
    path.write_text(json.dumps(config))
    return path


def timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) from spawn to exit."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.returncode not in (0,):
        raise RuntimeError(f"{command[0]} exited {process.returncode}:\n{stderr[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def run_navtui(repo: Path, script: Path, steps: int, home: Path) -> tuple[float, float]:
    navtui = str(Path(sys.executable).with_name("navtui"))
    # exit status 0: the session ended with the script's submit (see `timed`)
    return timed([navtui, "--auto", "--quiet", "--script", str(script), "--sandbox", "off",
                  "--max-steps", str(steps + 5), "--issue", ISSUE, str(repo)], base_env(home), repo)


def run_mini(mini: Path, repo: Path, config: Path, steps: int, home: Path) -> tuple[float, float]:
    env = base_env(home) | {"MSWEA_CONFIGURED": "true", "MSWEA_SILENT_STARTUP": "1",
                            "MSWEA_GLOBAL_CONFIG_DIR": str(home / "mini-config")}
    env.pop("PYTHONPATH", None)
    trajectory = home / "mini.traj.json"
    result = timed([str(mini), "-c", "mini.yaml", "-c", str(config), "-y", "--exit-immediately",
                    "-t", ISSUE, "-o", str(trajectory)], env, repo)
    info = json.loads(trajectory.read_text())["info"]
    if info["exit_status"] != "Submitted" or info["model_stats"]["api_calls"] != steps + 1:
        raise RuntimeError(f"mini did not run the script to its submit: {info['exit_status']}, "
                           f"{info['model_stats']['api_calls']} calls")
    return result


def base_env(home: Path) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "PYTHONPYCACHEPREFIX": str(PYCACHE), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null", "TERM": "dumb"}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--commands", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mini-version", default="2.4.6")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "navtui-bench")
    args = parser.parse_args()
    mini = mini_environment(args.cache, args.mini_version)
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="navtui-bench-") as tmp:
        work = Path(tmp)
        template = work / "template"
        names = generate_repo(template, args.files)
        bash = commands(names, args.commands, args.seed)
        sessions = {"long": bash, "short": []}
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for run in range(-1, args.runs):  # run -1 warms the bytecode caches and is not counted
            for tool in ("navtui", "mini") if run % 2 == 0 else ("mini", "navtui"):
                for length, cmds in sessions.items():
                    repo, home = work / f"{tool}-{run}-{length}", work / f"home-{tool}-{run}-{length}"
                    copy_repo(template, repo)
                    home.mkdir()
                    if tool == "navtui":
                        script = navtui_script(home / "s.jsonl", cmds)
                        result = run_navtui(repo, script, len(cmds), home)
                    else:
                        config = mini_config(home / "bench-mini.yaml", cmds, repo)
                        result = run_mini(mini, repo, config, len(cmds), home)
                    if run >= 0:
                        times.setdefault((tool, length), []).append(result)
                    shutil.rmtree(repo)
            loads.append(os.getloadavg()[0])

    def median(tool: str, length: str, which: int) -> float:
        return statistics.median(t[which] for t in times[(tool, length)])

    print(f"{args.commands} bash commands + submit on a {args.files}-file repository; {args.runs} runs each, "
          f"alternated, medians; load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    print(f"  {'':<34} {'ms/step wall':>12} {'ms/step CPU':>12} {'submit-only s':>14} {'its CPU s':>10}")
    rows = {}
    for tool, label in (("navtui", "navtui --auto (replay)"), ("mini", f"mini-swe-agent {args.mini_version}")):
        wall = (median(tool, "long", 0) - median(tool, "short", 0)) / args.commands
        cpu = (median(tool, "long", 1) - median(tool, "short", 1)) / args.commands
        rows[tool] = (wall, cpu, median(tool, "short", 0), median(tool, "short", 1))
        print(f"  {label:<34} {wall * 1e3:>12.1f} {cpu * 1e3:>12.1f} {rows[tool][2]:>14.2f} "
              f"{rows[tool][3]:>10.2f}")
    ratio = [rows["navtui"][i] / rows["mini"][i] for i in range(4)]
    print(f"  {'navtui / mini (target <= 1.0)':<34} {ratio[0]:>11.2f}x {ratio[1]:>11.2f}x "
          f"{ratio[2]:>13.2f}x {ratio[3]:>9.2f}x")


if __name__ == "__main__":
    main()
