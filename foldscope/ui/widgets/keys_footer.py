"""The footer every screen shows: the help key first, so ``?`` is on screen at any width."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

HELP_ACTIONS = ("help", "app.help")
"""The action the help key runs, as the app or a screen names it."""


def _on_show(screen: Screen[Any]) -> bool:
    """The screen is on show: the current one, or under screens that let it show through (a
    dialog)."""
    stack = screen.app.screen_stack
    if screen not in stack:
        return False
    return all(above.styles.background.a < 1 for above in stack[stack.index(screen) + 1:])


class KeysFooter(Footer):
    """Textual's footer with the help key moved to the front.

    The footer lists the focused widget's keys first and the app's last, so on a narrow
    terminal the app's ``?`` was cut off the end; a person must always see how to find every key.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._composed: tuple[object, ...] | None = None
        """What the keys on show were composed from (``_keys_shown``)."""
        self._recompose_asked = False

    def _keys_shown(self) -> tuple[object, ...]:
        """What decides the keys the footer shows: each shown binding with its state."""
        return (self.compact, self.show_command_palette, *(
            (b.key, b.description, b.action, b.group, enabled, tooltip)
            for (_, b, enabled, tooltip) in self.screen.active_bindings.values() if b.show))

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """Recompose once the keys on show differ, not on every focus move: Textual's footer
        rebuilds all its keys each time the focus or a screen changes (each rebuild mounts and
        restyles a dozen widgets, a large part of opening a screen)."""
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if not _on_show(screen):
            return  # a screen hidden under another: its keys are composed when it resumes
        if not self._recompose_asked:
            self._recompose_asked = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._recompose_asked = False
        if self.is_attached and _on_show(self.screen) and self._keys_shown() != self._composed:
            await self.recompose()

    def on_mount(self) -> None:
        self.app.screen_change_signal.subscribe(self, self._screen_changed)

    def on_unmount(self) -> None:
        self.app.screen_change_signal.unsubscribe(self)

    def _screen_changed(self, screen: Screen[Any]) -> None:
        if screen is self.screen:
            self.bindings_changed(screen)

    def compose(self) -> ComposeResult:
        self._drop_closed_keys()
        if not self._bindings_ready:
            return
        self._composed = self._keys_shown()
        helps = [(b, enabled, tip) for (_, b, enabled, tip) in self.screen.active_bindings.values()
                 if b.show and b.action in HELP_ACTIONS]
        if helps:
            binding, enabled, tooltip = helps[0]
            yield self._settled(FooterKey(
                binding.key, self.app.get_key_display(binding), binding.description,
                binding.action, disabled=not enabled, tooltip=tooltip,
            ).data_bind(compact=Footer.compact))
        for widget in super().compose():
            if isinstance(widget, FooterKey) and widget.action in HELP_ACTIONS:
                continue
            yield self._settled(widget)

    def _settled(self, widget: Widget) -> Widget:
        """A key born with the footer's ``compact``: otherwise it mounts compact (its own
        default) and the binding then undoes it, two restyles per key on every
        recomposition (a focus or screen change)."""
        if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
            widget.set_reactive(FooterKey.compact, self.compact)  # the palette key is unbound
        return widget

    def _drop_closed_keys(self) -> None:
        """Forget the keys of earlier compositions: each key is bound to the footer's
        ``compact``, and Textual drops a removed key's binding only when ``compact`` changes
        (it never does here), so every recomposition (a focus or screen change) kept the
        keys it replaced alive, with everything they had drawn."""
        watchers = getattr(self, "__watchers", {}).get("compact")
        if watchers:
            watchers[:] = [(node, callback) for node, callback in watchers
                           if node.is_attached and not node._closing]

