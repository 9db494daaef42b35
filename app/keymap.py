"""The binding ids the config file's `[keymap]` may name, and the check that refuses others
and keys that clash.

The ids are those of every `Binding` that navtui's app, its screens and its widgets declare:
`app.tui`, each module of `app.screens` and of `widgets`, found by scanning those packages, so a
new screen or widget needs no list here. (Textual's own bindings have no ids.) A key the keymap
gives one binding must not be another's on the same screen (the screen's bindings, those it
inherits, and the app's): `"navtui.approve" = "r"` would leave reject without a key.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import pkgutil
import re
from types import ModuleType

from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen

from app.config import Config, ConfigError, load_config

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
    """ConfigError, with the file and line, for the first `[keymap]` id no binding has, or
    the first key it gives that another binding of the same screen has."""
    if not config.keymap:
        return
    known = binding_ids()
    for binding_id in config.keymap:
        if binding_id not in known:
            raise unknown_id(config, binding_id, known)
    for screen, bindings in screen_bindings():
        clash = first_clash(bindings, config.keymap)
        if clash is not None:
            raise clash_error(config, screen, *clash)


def app_settings() -> Config:
    """The config file's theme, keymap and allow rules for the app (`navtui`, `navtui demo`),
    its keymap checked; ConfigError says what is wrong."""
    from app.args import batch_parser, build_parser

    settings = load_config(build_parser(), also=(batch_parser(),))
    check_keymap(settings)
    return settings


def _bindings_of(cls: type) -> list[Binding]:
    """Every binding `cls` has, its base classes' included (Textual's own too)."""
    return [binding for base in reversed(cls.__mro__)
            for binding in Binding.make_bindings(vars(base).get("BINDINGS", ()))]


def screen_bindings() -> list[tuple[str, list[Binding]]]:
    """(screen class name, the bindings live on it: its own, inherited and the app's), for
    every screen navtui declares."""
    from app.tui import NavApp

    app_bindings = _bindings_of(NavApp)
    return [(cls.__name__, _bindings_of(cls) + app_bindings)
            for module in _modules()
            for _, cls in inspect.getmembers(module, inspect.isclass)
            if issubclass(cls, Screen) and cls.__module__ == module.__name__]


def _keys(binding: Binding, keymap: dict[str, str]) -> list[str]:
    keys = keymap.get(binding.id or "", binding.key)
    return [key.strip() for key in keys.split(",") if key.strip()]


def first_clash(bindings: list[Binding], keymap: dict[str, str]) -> tuple[str, Binding, Binding] | None:
    """(key, the remapped binding, the other binding) for the first key the keymap gives a
    binding that another of `bindings` also has; None when there is none."""
    owners: dict[str, list[Binding]] = {}
    for binding in bindings:
        for key in _keys(binding, keymap):
            holders = owners.setdefault(key, [])
            if all((held.id or held.action) != (binding.id or binding.action) for held in holders):
                holders.append(binding)
    for key, holders in owners.items():
        remapped = [binding for binding in holders if binding.id in keymap]
        if len(holders) > 1 and remapped:
            other = next(binding for binding in holders if binding is not remapped[0])
            return key, remapped[0], other
    return None


def clash_error(config: Config, screen: str, key: str, remapped: Binding, other: Binding) -> ConfigError:
    where = re.sub(r"(?<!^)(?=[A-Z])", " ", screen).lower()
    if other.id:
        whose = f"{other.id}'s key on the {where}"
        fix = (f"give {other.id} another key as well, e.g. \"{other.id}\" = \"KEY\", or give "
               f"{remapped.id} a key nothing else there has")
    else:
        whose = f"Textual's key for {other.action} on the {where}"
        fix = f"give {remapped.id} a key nothing else there has"
    return config.error("keymap", remapped.id or "",
                        f"{key!r} is already {whose}, which would be left without it; {fix}")


def unknown_id(config: Config, binding_id: str, known: list[str]) -> ConfigError:
    nearest = difflib.get_close_matches(binding_id, known, n=1)
    hint = f"did you mean {nearest[0]!r}? " if nearest else ""
    return config.error("keymap", binding_id,
                        f"no binding has this id; {hint}the ids are: {', '.join(known)}")
