"""The footer every screen shows: the help key first, so ``?`` is on screen at any width."""

from __future__ import annotations

from textual.app import ComposeResult
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
        if not self._bindings_ready:
            return
        helps = [(b, enabled, tip) for (_, b, enabled, tip) in self.screen.active_bindings.values()
                 if b.show and b.action in HELP_ACTIONS]
        if helps:
            binding, enabled, tooltip = helps[0]
            yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description,
                            binding.action, disabled=not enabled,
                            tooltip=tooltip).data_bind(compact=Footer.compact)
        for widget in super().compose():
            if isinstance(widget, FooterKey) and widget.action in HELP_ACTIONS:
                continue
            yield widget
