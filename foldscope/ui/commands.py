"""foldscope's command palette provider: every key's action, plus the choices behind them
(each metric, each theme, each sort column), searchable with ctrl+p.

Commands are read from what is live, never listed twice: the key bindings foldscope's own
screens, widgets and app declare on the screen the palette was opened from (their description is
the title, their tooltip the help), and ``palette_commands()`` on any of those nodes for
parametrised choices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode


@dataclass(frozen=True)
class PaletteCommand:
    """One palette entry."""

    title: str
    help: str
    callback: Callable[[], Any]


def _ours(node: DOMNode) -> bool:
    return type(node).__module__.startswith("foldscope.")


def _declared_here(node: DOMNode, binding: Any) -> bool:
    """Whether a foldscope class of the node declares the binding itself (not one inherited
    from a Textual widget, such as a table's cursor keys)."""
    for cls in type(node).__mro__:
        if not cls.__module__.startswith("foldscope."):
            continue
        for declared in cls.__dict__.get("BINDINGS", ()):
            action = getattr(declared, "action", None)
            if action is None and isinstance(declared, tuple) and len(declared) > 1:
                action = declared[1]
            if action == binding.action:
                return True
    return False


def binding_commands(screen: Any, *, generic: bool = False) -> list[PaletteCommand]:
    """The actions of the keys live on a screen (its focused widget's, its own and the app's)
    that foldscope declares, titled by their descriptions; with ``generic``, instead the keys
    foldscope's widgets inherit from Textual's (a table's cursor moves)."""
    out: list[PaletteCommand] = []
    seen: set[tuple[int, str]] = set()
    for active in screen.active_bindings.values():
        node, binding = active.node, active.binding
        if not _ours(node) or not binding.description or not active.enabled:
            continue
        if _declared_here(node, binding) == generic or (id(node), binding.action) in seen:
            continue
        seen.add((id(node), binding.action))
        key = screen.app.get_key_display(binding)
        out.append(PaletteCommand(
            binding.description, f"{binding.tooltip or binding.description} (key {key})",
            partial(screen.app.run_action, binding.action, node)))
    return out


def node_commands(screen: Any) -> list[PaletteCommand]:
    """Parametrised commands from ``palette_commands()`` on the app, the screen and the focused
    widget's ancestors."""
    nodes: list[Any] = [screen.app, screen]
    focused = screen.focused
    while focused is not None and focused is not screen:
        nodes.append(focused)
        focused = focused.parent
    out: list[PaletteCommand] = []
    for node in nodes:
        provide = getattr(node, "palette_commands", None)
        if provide is not None:
            out.extend(provide())
    return out


def all_commands(screen: Any) -> list[PaletteCommand]:
    """Every palette command for a screen, each title once (the first wins): foldscope's own
    actions and choices, then the generic keys its widgets inherit (cursor moves)."""
    out: dict[str, PaletteCommand] = {}
    for command in (*binding_commands(screen), *node_commands(screen),
                    *binding_commands(screen, generic=True)):
        out.setdefault(command.title, command)
    return list(out.values())


def system_commands(screen: Any, taken: set[str]) -> list[tuple[PaletteCommand, bool]]:
    """Textual's generic commands (keys panel, screenshot, maximise…) whose titles foldscope's
    own commands do not already use, each with whether it shows before anything is typed."""
    out = []
    for command in screen.app.get_system_commands(screen):
        if command.title not in taken:
            taken.add(command.title)
            out.append((PaletteCommand(command.title, command.help, command.callback),
                        command.discover))
    return out


class FoldscopeCommands(Provider):
    """The palette's one provider: foldscope's actions on the screen the palette was opened
    from, then Textual's generic commands (one provider, so foldscope's always come first and
    no title is listed twice)."""

    def _commands(self) -> Iterable[PaletteCommand]:
        ours = all_commands(self.screen)
        return [*ours, *(c for c, _ in system_commands(self.screen, {c.title for c in ours}))]

    async def discover(self) -> Hits:
        ours = all_commands(self.screen)
        for command in ours:
            yield DiscoveryHit(command.title, command.callback, help=command.help)
        for command, shown in system_commands(self.screen, {c.title for c in ours}):
            if shown:
                yield DiscoveryHit(command.title, command.callback, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(score, matcher.highlight(command.title), command.callback,
                          text=command.title, help=command.help)
