"""Tasks from the user's own history (`navtui tasks`): commits and kept sessions made into
SWE-bench-shaped instances whose tests fail before the fix and pass after it (`mine`), and the
sandboxed test runs that decide it (`checks`, `testcmd`), shared with `navtui eval`."""

from agent_core.tasks.checks import CheckError, CheckRunner, CheckRun
from agent_core.tasks.mine import Mined, Task, find_tasks, split_patch

__all__ = ["CheckError", "Mined", "Task", "CheckRunner", "CheckRun", "find_tasks", "split_patch"]
