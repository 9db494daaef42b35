"""A repository's adapters: the versions `navtui finetune` made for it, and which is current.

Kept in `.git/navtui/adapters.json` (written whole, atomically): each version's name (`v<N>`
from its manifest, `v<N>-2`... when two lineages share a number), its directory and when it was
added; `current`, the one `--adapter current` loads; and the currents before it, so `rollback`
goes back one. Each version's metrics live in its own manifest (`navtui-adapter.json`):
training's under `metrics`, `navtui eval`'s under `eval`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agent_core.backends.identity import ADAPTER_MANIFEST, read_manifest
from agent_core.trajectory import repo_state_dir

REGISTRY_FILE = "adapters.json"
CURRENT = "current"  # what `--adapter current` names


class RegistryError(Exception):
    """The registry cannot do what was asked; the message says what to pass instead."""


@dataclass
class Version:
    """One registered adapter."""

    name: str
    path: Path
    added: str

    @property
    def manifest(self) -> dict[str, Any]:
        return read_manifest(self.path) or {}


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n",
                    encoding="utf-8")
    os.replace(temp, path)


def update_manifest(adapter: Path, key: str, value: Any) -> bool:
    """Set `key` in the adapter's manifest (False when it has none: not a navtui adapter)."""
    manifest = read_manifest(adapter)
    if manifest is None:
        return False
    manifest[key] = value
    write_json_atomically(Path(adapter).expanduser() / ADAPTER_MANIFEST, manifest)
    return True


class Registry:
    """The adapters of the repository at `repo`."""

    def __init__(self, repo: Path | str) -> None:
        self.path = repo_state_dir(repo) / REGISTRY_FILE
        self.data = self._read()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"versions": {}, "current": None, "before": []}
        except (OSError, ValueError) as error:
            raise RegistryError(f"{self.path} is unreadable ({error}): fix or remove it") from None
        return data if isinstance(data, dict) else {"versions": {}, "current": None, "before": []}

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomically(self.path, self.data)

    @property
    def versions(self) -> list[Version]:
        return [Version(name, Path(entry["path"]), entry.get("added", ""))
                for name, entry in self.data["versions"].items()]

    @property
    def current(self) -> Version | None:
        name = self.data.get("current")
        return self.get(name) if name else None

    def get(self, name: str) -> Version:
        """A version by name (`v2` or `2`), by `current`, or by its directory."""
        if name == CURRENT:
            current = self.current
            if current is None:
                raise RegistryError("no adapter is current yet: `navtui adapters REPO promote "
                                    "VERSION` makes one current")
            return current
        entries = self.data["versions"]
        key = name if name in entries else f"v{name}" if f"v{name}" in entries else None
        if key is None:
            wanted = Path(name).expanduser().resolve()
            key = next((k for k, e in entries.items() if Path(e["path"]) == wanted), None)
        if key is None:
            known = ", ".join(entries) or "none yet"
            raise RegistryError(f"no adapter version {name!r} (known: {known}); `navtui adapters "
                                "REPO` lists them")
        return Version(key, Path(entries[key]["path"]), entries[key].get("added", ""))

    def add(self, adapter: Path) -> Version:
        """Register an adapter directory (again: its existing name)."""
        path = Path(adapter).expanduser().resolve()
        if not (path / "adapter_config.json").is_file():
            raise RegistryError(f"{path} holds no adapter (adapter_config.json)")
        for version in self.versions:
            if version.path == path:
                return version
        number = (read_manifest(path) or {}).get("version")
        base = f"v{number}" if isinstance(number, int) else path.name
        name, n = base, 1
        while name in self.data["versions"]:
            n += 1
            name = f"{base}-{n}"
        added = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.data["versions"][name] = {"path": str(path), "added": added}
        self.save()
        return Version(name, path, added)

    def promote(self, name: str) -> Version:
        """Make a version current; the one before is remembered for `rollback`."""
        version = self.get(name)
        previous = self.data.get("current")
        if previous != version.name:
            if previous:
                self.data["before"].append(previous)
            self.data["current"] = version.name
            self.save()
        return version

    def rollback(self) -> Version:
        """Make the current before this one current again."""
        if not self.data["before"]:
            raise RegistryError("nothing to roll back to: no adapter was current before this one")
        self.data["current"] = self.data["before"].pop()
        self.save()
        return self.get(self.data["current"])
