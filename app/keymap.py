"""The binding ids the config file's `[keymap]` may name, and the check that refuses others.

The ids are those of every `Binding` that navtui's app, its screens and its widgets declare:
`app.tui`, each module of `app.screens` and of `widgets`, found by scanning those packages, so a
new screen or widget needs no list here. (Textual's own bindings have no ids.)
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import pkgutil
from types import ModuleType

from textual.binding import Binding
from textual.dom import DOMNode

from app.config import Config, ConfigError

PACKAGES = ("app.screens", "widgets")


def _modules() -> list[ModuleType]:
    modules = [importlib.import_module("app.tui")]
    for name in PACKAGES:
        package = importlib.import_module(name)
        modules += [importlib.import_module(f"{name}.{info.name}")
                    for info in pkgutil.iter_modules(package.__path__)]
    return modules


def binding_ids() -> list[str]:
    """Every binding id navtui declares, sorted."""
    ids: set[str] = set()
    for module in _modules():
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, DOMNode) and cls.__module__ == module.__name__:
                ids.update(binding.id for binding in vars(cls).get("BINDINGS", ())
                           if isinstance(binding, Binding) and binding.id)
    return sorted(ids)


def check_keymap(config: Config) -> None:
    """ConfigError, with the file and line, for the first `[keymap]` id no binding has."""
    if not config.keymap:
        return
    known = binding_ids()
    for binding_id in config.keymap:
        if binding_id not in known:
            raise unknown_id(config, binding_id, known)


def unknown_id(config: Config, binding_id: str, known: list[str]) -> ConfigError:
    nearest = difflib.get_close_matches(binding_id, known, n=1)
    hint = f"did you mean {nearest[0]!r}? " if nearest else ""
    return config.error("keymap", binding_id,
                        f"no binding has this id; {hint}the ids are: {', '.join(known)}")
