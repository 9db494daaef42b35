"""agent_core is headless: importing any of it must not import Textual, app or widgets; the
model-interface layer (formats, prompts) sits below the backends."""

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

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


def _imports(path: Path, package: str) -> set[str]:
    """The agent_core modules a file imports at run time (function-level ones included; those
    under `if TYPE_CHECKING:` are not run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(child)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for child in ast.walk(stmt)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return {name for name in found if name.split(".")[0] == "agent_core"}


def _module_files() -> dict[str, Path]:
    root = Path(agent_core.__path__[0])
    files = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def test_formats_and_prompts_import_nothing_from_backends():
    files = _module_files()

    def package_of(name: str) -> str:
        return name if files[name].name == "__init__.py" else name.rpartition(".")[0]

    starts = [n for n in files if n.startswith(("agent_core.formats", "agent_core.prompt"))]
    assert "agent_core.formats.prompting" in starts and "agent_core.prompts" in starts
    for start in starts:
        seen, todo, via = {start}, [start], {start: start}
        while todo:
            name = todo.pop()
            for imported in _imports(files[name], package_of(name)):
                if imported.startswith("agent_core.backends"):
                    raise AssertionError(f"{start} reaches {imported} (through {via[name]}, {name})")
                if imported in files and imported not in seen:
                    seen.add(imported)
                    via[imported] = via[name] if via[name] != start else imported
                    todo.append(imported)


def test_agent_core_modules_stay_under_700_lines():
    """The project's size rule: a module over 700 lines is split into ones that each do one thing."""
    long = {
        name: lines for name, path in _module_files().items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 700
    }
    assert long == {}


def test_nothing_outside_agent_core_git_imports_its_insides():
    """`agent_core/git/__init__.py` is the package's one door: modules elsewhere in the product
    import what it exports, never one of its modules (tests may look inside)."""
    root = Path(agent_core.__path__[0]).parent
    git_dir = root / "agent_core" / "git"
    import agent_core.git as face

    insides = ({path.stem for path in git_dir.rglob("*.py")}
               | {path.name for path in git_dir.iterdir() if path.is_dir()}) - {"__init__", *face.__all__}
    offenders = []
    for folder in ("agent_core", "app", "widgets"):
        for path in sorted((root / folder).rglob("*.py")):
            if git_dir in path.parents:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module:
                    names = {alias.name for alias in node.names}
                    if node.module.startswith("agent_core.git.") or (
                            node.module == "agent_core.git" and names & insides):
                        offenders.append(f"{path.relative_to(root)}: from {node.module}")
                elif isinstance(node, ast.Import):
                    offenders += [f"{path.relative_to(root)}: import {alias.name}"
                                  for alias in node.names
                                  if alias.name.startswith("agent_core.git.")]
    assert offenders == []
