"""Where an instance's repository is: a local path, or a repository as SWE-bench names it.

SWE-bench publishes `"repo": "django/django"`. Such an `owner/name` (when no directory of that
name sits beside the instances file) is found in `--repos-dir` as `owner__name` (the instance
ids' spelling) or `owner/name`, else cloned once, bare, into a cache directory
(`$XDG_CACHE_HOME/navtui/repos/owner__name`, or `~/.cache/...`) from `https://github.com/`
(`--repos-url` names another host or a local mirror). Every instance of the repository then
reads its objects from there (`batch.Checkouts`). A base commit the clone lacks is said with the
command that fetches it. Every problem is one `BatchError` line, never a traceback.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from agent_core.git import GitRunner

SLUG = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
DEFAULT_URL = "https://github.com"


class RepoError(Exception):
    """A repository cannot be found or cloned; the message says what to do."""


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "navtui" / "repos"


def is_slug(value: str) -> bool:
    return bool(SLUG.match(value)) and ".." not in value.split("/")


@dataclass
class RepoFinder:
    """Resolves `owner/name` slugs to local repositories, cloning each at most once."""

    repos_dir: Path | None = None
    cache: Path | None = None
    url: str = DEFAULT_URL

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._found: dict[str, Path] = {}

    def find(self, slug: str) -> Path:
        with self._lock:
            if slug not in self._found:
                self._found[slug] = self._locate(slug)
            return self._found[slug]

    def _locate(self, slug: str) -> Path:
        owner, name = slug.split("/")
        if self.repos_dir is not None:
            for candidate in (self.repos_dir / f"{owner}__{name}", self.repos_dir / owner / name):
                if _is_repo(candidate):
                    return candidate.resolve()
            raise RepoError(
                f"no clone of {slug} in --repos-dir {self.repos_dir} (looked for "
                f"{owner}__{name} and {owner}/{name}); clone it there with `git clone "
                f"{self._source(slug)} {self.repos_dir / f'{owner}__{name}'}`, or leave out "
                "--repos-dir to let navtui clone it into its cache")
        cache = self.cache or default_cache()
        target = cache / f"{owner}__{name}"
        if _is_repo(target):
            return target.resolve()
        return self._clone(slug, target)

    def _source(self, slug: str) -> str:
        return f"{self.url.rstrip('/')}/{slug}.git"

    def _clone(self, slug: str, target: Path) -> Path:
        source = self._source(slug)
        scheme = urlsplit(source).scheme or "file"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RepoError(f"cannot make the repository cache {target.parent}: "
                            f"{exc.strerror}") from None
        partial = target.with_name(target.name + ".partial")
        allow = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"protocol.{scheme}.allow",
                 "GIT_CONFIG_VALUE_0": "always"}
        if partial.is_dir() and not partial.is_symlink():
            shutil.rmtree(partial)  # an earlier clone that did not finish
        result = GitRunner(target.parent, identity=False).attempt(
            "clone", "--bare", "--quiet", "--", source, str(partial), env=allow)
        if result.returncode != 0:
            said = result.stderr.decode("utf-8", "replace").strip().splitlines()
            raise RepoError(f"cannot clone {slug} from {source}: {said[-1] if said else 'failed'}"
                            f"; check the network, or clone it yourself and pass --repos-dir")
        partial.rename(target)
        return target.resolve()


def has_commit(repo: Path, commit: str) -> bool:
    result = GitRunner(repo, identity=False).attempt("cat-file", "-e", f"{commit}^{{commit}}")
    return result.returncode == 0


def _is_repo(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink() and (
        (path / ".git").exists() or (path / "objects").is_dir() and (path / "HEAD").is_file())
