"""The keys as they are now: each binding with the key(s) the live keymap gives it, what it
does and its id, for the help screen and the command palette (so neither is a list of its own)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from textual.app import App
from textual.binding import Binding


# The command palette's key, for the help (Textual's own: `App.COMMAND_PALETTE_BINDING`, no id).
PALETTE = Binding(App.COMMAND_PALETTE_BINDING, "command_palette", "Palette",
                  tooltip="Command palette: these actions by name")


@dataclass(frozen=True)
class KeyRow:
    keys: str  # as the footer shows them, e.g. "a" or "^q"
    action: str
    description: str
    what: str  # the binding's tooltip (its description when it has none)
    binding_id: str


def live_binding(binding: Binding, keymap: Mapping[str, str]) -> Binding:
    """`binding` with the key(s) the keymap gives its id."""
    keys = keymap.get(binding.id or "")
    return dataclasses.replace(binding, key=keys) if keys else binding


def key_rows(app: App, bindings: Iterable[Binding], keymap: Mapping[str, str]) -> list[KeyRow]:
    """One row per binding (in the order given), its keys as remapped by `keymap`."""
    rows = []
    for binding in bindings:
        live = live_binding(binding, keymap)
        shown = ", ".join(
            app.get_key_display(dataclasses.replace(live, key=key.strip(), key_display=None))
            for key in live.key.split(",")
        )
        rows.append(KeyRow(shown, binding.action, binding.description,
                           binding.tooltip or binding.description, binding.id or ""))
    return rows
