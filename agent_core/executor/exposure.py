"""What of the user's home (and the rest of the machine beyond the system directories) the
sandbox shows, read-only: the user's toolchain in, secrets out.

Inside the sandbox the home is an empty throw-away directory. Shown again in it, at their real
paths, read-only (`find_exposure`):

* every directory on PATH (the entries of those the sandbox shows anyway, such as /usr/bin, are
  not followed), and for a `bin` directory its prefix's `lib`, `lib64` and `libexec`
  (where `pip install --user` scripts and nvm's node keep their code);
* what each PATH entry resolves to: a symlink's target and a script's `#!` interpreter, each as
  its installation (the venv or conda env holding it, else the prefix above its `bin`);
* the roots of version managers found there: pyenv (`PYENV_ROOT`, or the root above a
  `shims` directory on PATH; and where its versions really are: a linked version's target, a
  venv version's base) and rustup (`RUSTUP_HOME`, or `~/.rustup` when `rustup` is on PATH);
* the active venv (`VIRTUAL_ENV`) and its base interpreter (`home =` in pyvenv.cfg), the base
  interpreters of venvs at the repository's top level (`repository_venv_bases`), the active
  conda env (`CONDA_PREFIX`), navtui's own Python, and whatever `--expose` names.

Never shown, even when on PATH or asked for (`denied_paths`): credentials (`~/.ssh`, `~/.gnupg`,
cloud and registry logins), shell and REPL histories and navtui's config. One inside a shown
directory is covered (`Exposure.masked`); a path inside a denied one is left out (`refused`).
The whole home (or a directory above it) is never shown: its secrets are the point.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# Under each home: credentials, logins and tokens.
CREDENTIALS = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".config/hub",
    ".netrc", ".git-credentials", ".config/git/credentials", ".docker", ".kube", ".pypirc",
    ".npmrc", ".yarnrc", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
    ".m2/settings.xml", ".m2/settings-security.xml", ".password-store", ".local/share/keyrings",
    ".cache/huggingface/token", ".huggingface/token", ".config/op", ".vault-token",
    ".terraform.d/credentials.tfrc.json",
)
# Under each home: what the user typed into shells and REPLs.
HISTORIES = (
    ".bash_history", ".zsh_history", ".zhistory", ".histfile", ".sh_history", ".history",
    ".python_history", ".node_repl_history", ".psql_history", ".mysql_history",
    ".sqlite_history", ".lesshst", ".irb_history", ".rediscli_history", ".Rhistory",
    ".local/share/fish/fish_history", ".config/fish/fish_history", ".local/share/nvim/shada",
    ".viminfo",
)
NAVTUI_CONFIG = ".config/navtui"
DENIED_IN_HOME = (*CREDENTIALS, *HISTORIES, NAVTUI_CONFIG)
# Entries read per PATH directory (a huge one is shown, its entries not followed past this).
ENTRY_LIMIT = 2_000
# Beside a `bin` directory on PATH: where its programs keep their code.
_PREFIX_PARTS = ("lib", "lib64", "libexec")


class ExposureError(Exception):
    """A path the user asked to expose cannot be; the message says why and what to do."""


@dataclass(frozen=True)
class Exposure:
    """What the sandbox shows read-only beyond the system: `paths` (real paths, bound at
    themselves), `aliases` (a symlinked PATH entry's own path -> its real one), `masked` (denied
    paths inside them, covered) and `refused` (wanted but denied, or a whole home)."""

    paths: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    masked: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


def denied_paths(environ: Mapping[str, str], homes: Iterable[str]) -> tuple[str, ...]:
    """Every path never shown: the fixed list under each home, navtui's config wherever
    `XDG_CONFIG_HOME`/`NAVTUI_CONFIG` put it, `HISTFILE`; each also as its real path."""
    found = {f"{home}/{name}" for home in homes for name in DENIED_IN_HOME}
    if environ.get("XDG_CONFIG_HOME", "").startswith("/"):
        found.add(f"{environ['XDG_CONFIG_HOME'].rstrip('/')}/navtui")
    for name in ("NAVTUI_CONFIG", "HISTFILE"):
        if environ.get(name, "").startswith("/"):
            found.add(environ[name])
    found |= {os.path.realpath(path) for path in found}
    return tuple(sorted(found))


def find_exposure(
    environ: Mapping[str, str],
    *,
    homes: Iterable[str],
    visible: Iterable[str],
    asked: Iterable[Path] = (),
    readable: Iterable[str] = (),
) -> Exposure:
    """What to show from `environ` (PATH, VIRTUAL_ENV, …), `asked` (`--expose`, checked: raises
    ExposureError) and `readable` (navtui's own Python). `homes` are hidden, `visible` are the
    directories the sandbox shows anyway (nothing under them is listed unless under a home)."""
    homes = tuple(h.rstrip("/") for h in homes if h.startswith("/") and h.rstrip("/"))
    denied = denied_paths(environ, homes)
    seen_anyway = tuple(visible)
    finder = _Finder(environ, homes, seen_anyway)
    wanted: list[str] = [*finder.path_entries(), *finder.environment(), *readable]
    aliases = finder.aliases
    for path in asked:
        real = _asked(path, homes, denied)
        wanted.append(real)
        lexical = os.path.abspath(os.path.expanduser(str(path)))
        if lexical != real:
            aliases.append((lexical, real))
    kept: list[str] = []
    refused: list[str] = []
    for found in sorted({os.path.realpath(p) for p in set(wanted) if p and os.path.isabs(p)}):
        if not os.path.exists(found) or (_shown(found, seen_anyway) and not _in_any(found, homes)):
            continue
        if _in_any(found, denied) or any(_under(home, found) for home in homes) or found == "/":
            refused.append(found)
        elif not _in_any(found, kept):
            kept.append(found)
    masked = sorted(d for d in denied if os.path.lexists(d) and not os.path.islink(d)
                    and any(_under(d, top) and d != top for top in kept))
    # A link is made only where nothing shows it already (bwrap refuses to make it over a file).
    shown_aliases = tuple(sorted({
        (a, r) for a, r in aliases
        if _in_any(r, kept) and not _in_any(a, kept) and not _in_any(a, denied)
        and (not _shown(a, seen_anyway) or _in_any(a, homes))
    }))
    return Exposure(tuple(kept), shown_aliases, tuple(masked), tuple(refused))


class _Finder:
    """Reads PATH and the environment for what programs need (see the module doc)."""

    def __init__(self, environ: Mapping[str, str], homes: tuple[str, ...],
                 visible: tuple[str, ...]) -> None:
        self.environ = environ
        self.homes = homes
        self.visible = visible
        self.aliases: list[tuple[str, str]] = []
        self._installations: dict[str, list[str]] = {}
        self._interpreters: dict[str, list[str]] = {}

    def path_entries(self) -> list[str]:
        wanted: list[str] = []
        for entry in self.environ.get("PATH", "").split(":"):
            if not entry.startswith("/") or not os.path.isdir(entry):
                continue
            real = os.path.realpath(entry)
            if real != os.path.abspath(entry):
                self.aliases.append((os.path.abspath(entry), real))
            wanted.append(real)
            wanted += self._installation_of_dir(real)
            wanted += self._pyenv_root(real)
            if not _shown(real, self.visible) or _in_any(real, self.homes):
                wanted += self._resolved_entries(real)
        return wanted

    def environment(self) -> list[str]:
        """The active venv and its base, the active conda env, pyenv and rustup roots."""
        wanted = []
        venv = self.environ.get("VIRTUAL_ENV", "")
        if venv.startswith("/") and os.path.isdir(venv):
            wanted += [venv, venv_base(Path(venv)) or ""]
        wanted.append(self.environ.get("CONDA_PREFIX", ""))
        root = self.environ.get("PYENV_ROOT", "")
        if root.startswith("/"):
            wanted += [root, *_pyenv_versions(Path(root))]
        if self.environ.get("RUSTUP_HOME"):
            wanted.append(self.environ["RUSTUP_HOME"])
        elif any(os.path.isfile(f"{d}/rustup") for d in self.environ.get("PATH", "").split(":")
                 if d.startswith("/")):
            wanted += [f"{home}/.rustup" for home in self.homes]
        return wanted

    def _installation_of_dir(self, directory: str) -> list[str]:
        parent = os.path.dirname(directory)
        if os.path.isfile(f"{parent}/pyvenv.cfg"):
            return [parent, venv_base(Path(parent)) or ""]
        if os.path.isdir(f"{parent}/conda-meta"):
            return [parent]
        if os.path.basename(directory) == "bin" and not self._too_wide(parent):
            return [f"{parent}/{part}" for part in _PREFIX_PARTS]
        return []

    def _pyenv_root(self, directory: str) -> list[str]:
        """pyenv's root when `directory` is (a plugin's) shims under it: its shims run
        `<root>/libexec/pyenv`, which runs a version under `<root>/versions`."""
        if os.path.basename(directory) != "shims":
            return []
        for above in Path(directory).parents:
            if (above / "libexec/pyenv").is_file():
                return [str(above), *_pyenv_versions(above)]
            if str(above) in self.homes or above == above.parent:
                break
        return []

    def _resolved_entries(self, directory: str) -> list[str]:
        wanted = []
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)[:ENTRY_LIMIT]
        except OSError:
            return []
        for entry in entries:
            target = os.path.realpath(entry.path) if entry.is_symlink() else entry.path
            if os.path.dirname(target) != directory:
                wanted += self.installation_of(target)
            interpreter = _shebang(target)
            if interpreter and interpreter not in self._interpreters:
                real = os.path.realpath(interpreter)
                self._interpreters[interpreter] = self.installation_of(real)
            wanted += self._interpreters.get(interpreter or "", [])
        return wanted

    def installation_of(self, program: str) -> list[str]:
        """What a program needs beside itself: the venv or conda env holding it (and the venv's
        base), else the prefix above its `bin`, else its own directory."""
        if not os.path.exists(program):
            return []
        directory = os.path.dirname(program)
        if directory not in self._installations:
            self._installations[directory] = self._installation(directory)
        return self._installations[directory]

    def _installation(self, directory: str) -> list[str]:
        for above in [Path(directory), *Path(directory).parents]:
            if str(above) in self.homes or above == above.parent:
                break
            if (above / "pyvenv.cfg").is_file():
                return [str(above), venv_base(above) or ""]
            if (above / "conda-meta").is_dir():
                return [str(above)]
        parent = os.path.dirname(directory)
        if os.path.basename(directory) == "bin" and not self._too_wide(parent):
            return [parent]
        return [directory]

    def _too_wide(self, path: str) -> bool:
        return path == "/" or any(_under(home, path) for home in self.homes)


def _pyenv_versions(root: Path) -> list[str]:
    """Where pyenv's versions really are: a version linked to an installation elsewhere (a
    system or uv-managed Python), and a venv version's base (pyenv-virtualenv)."""
    wanted = []
    try:
        versions = sorted((root / "versions").iterdir())[:ENTRY_LIMIT]
    except OSError:
        return []
    for version in versions:
        if version.is_symlink():
            wanted.append(os.path.realpath(version))
        if (version / "pyvenv.cfg").is_file():
            wanted.append(venv_base(version) or "")
    return wanted


def venv_base(venv: Path) -> str | None:
    """The installation a venv's python comes from (`home = …/bin` in pyvenv.cfg)."""
    try:
        text = (venv / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        bin_dir = Path(value.strip())
        # Only a real interpreter's prefix (a python beside its standard library): a planted
        # `home` must not show another directory of the user's.
        if (key.strip() == "home" and bin_dir.is_absolute() and any(bin_dir.glob("python*"))
                and any((bin_dir.parent / "lib").glob("python3*/os.py"))):
            return str(bin_dir.parent)
    return None


def repository_venv_bases(root: Path) -> list[str]:
    """The base interpreters of venvs at the repository's top level (`.venv/`, `venv/`, …),
    which their `bin/python` links to wherever it lives."""
    try:
        children = sorted(root.iterdir())[:ENTRY_LIMIT]
    except OSError:
        return []
    return [base for child in children
            if not child.is_symlink() and (child / "pyvenv.cfg").is_file()
            and (base := venv_base(child))]


def _shebang(path: str) -> str | None:
    """The absolute interpreter a script's `#!` line names (not `/usr/bin/env`: that one
    looks the program up on PATH, which is shown anyway)."""
    try:
        with open(path, "rb") as file:
            head = file.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].split()
    if not words or not words[0].startswith(b"/") or os.path.basename(words[0]) == b"env":
        return None
    return os.fsdecode(words[0])


def _asked(path: Path, homes: tuple[str, ...], denied: tuple[str, ...]) -> str:
    """The real path of an `--expose` path, or ExposureError saying why it cannot be shown."""
    shown = str(path)
    real = os.path.realpath(os.path.expanduser(shown))
    if not os.path.exists(real):
        raise ExposureError(f"--expose {shown}: no such file or directory; fix the path or drop it")
    if _in_any(real, denied) or _in_any(os.path.abspath(os.path.expanduser(shown)), denied):
        raise ExposureError(f"--expose {shown}: navtui never shows credentials, shell histories "
                            "or its own config inside the sandbox; copy what the model needs "
                            "into the repository instead")
    if real == "/" or any(_under(home, real) for home in homes):
        raise ExposureError(f"--expose {shown}: that would show your whole home directory; name "
                            "the directories in it that the model needs")
    return real


def _shown(path: str, tops: tuple[str, ...]) -> bool:
    return any(_under(path, top) for top in tops)


def _in_any(path: str, tops: Iterable[str]) -> bool:
    return any(_under(path, top) for top in tops)


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")
