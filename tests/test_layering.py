"""agent_core is headless: importing any of it must not import Textual, app or widgets."""

import pkgutil
import subprocess
import sys

import agent_core


def test_agent_core_imports_no_textual():
    modules = [m.name for m in pkgutil.walk_packages(agent_core.__path__, "agent_core.")]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'app', 'widgets'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"agent_core pulled in: {result.stdout.strip()}"
