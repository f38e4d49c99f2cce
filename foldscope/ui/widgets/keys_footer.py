"""The footer every screen shows: the help key first, so ``?`` is on screen at any width."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

HELP_ACTIONS = ("help", "app.help")
"""The action the help key runs, as the app or a screen names it."""


class KeysFooter(Footer):
    """Textual's footer with the help key moved to the front.

    The footer lists the focused widget's keys first and the app's last, so on a narrow
    terminal the app's ``?`` was cut off the end; a person must always see how to find every key.
    """

    def compose(self) -> ComposeResult:
        self._drop_closed_keys()
        if not self._bindings_ready:
            return
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

