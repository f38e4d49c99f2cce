"""What the UI holds on to, let go of, and when the cyclic collector may run.

A full pass of Python's cyclic collector walks every tracked object: in a TUI that is every
widget, style and drawn line, 100–200 ms on this app, and it runs whenever allocations pass a
threshold, i.e. in the middle of the work a key starts. Here the collector waits while a person
presses keys and runs in the pauses between them; what lives as long as the app (modules,
classes, the first screen) is frozen out of its passes.
"""

from __future__ import annotations

import gc
import time

from textual._styles_cache import StylesCache

HOLD_S = 0.4
"""How long after the last key (or click) the collector stays paused: a key's work, workers
included, lands within it."""

HOLD_ALLOCATIONS = 1_000_000
"""Net allocations after which the young generations are collected anyway, keys or not (a held
key cannot grow memory without bound); the full pass still waits for a pause."""


def release_drawn_lines() -> None:
    """Let go of the lines every closed widget drew.

    Textual memoises a colour pair per widget's line cache (``StylesCache.get_inner_outer``, an
    ``lru_cache`` of 1,024 entries keyed by the cache itself), so the last 1,024 widgets ever
    drawn keep every line they rendered, closed screens included: tens of thousands of objects
    each full collection walks. The pairs are two styles from two colours, recomputed on the
    next draw.
    """
    StylesCache.get_inner_outer.cache_clear()


class KeyPausedCollector:
    """Pauses the cyclic collector from a key until the app has been idle for ``HOLD_S``.

    ``start`` (once the app runs) freezes what exists then and takes over the collector;
    ``key`` on each input event; ``tick`` from a timer; ``stop`` gives the collector back as it
    was (the app may run inside a longer process: tests, the bench).
    """

    def __init__(self) -> None:
        self._was_enabled = gc.isenabled()
        self._last_key = float("-inf")
        self._started = False

    def start(self) -> None:
        """Freeze what lives as long as the app out of the collector's passes."""
        if self._started:
            return
        self._started = True
        self._was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()

    def key(self) -> None:
        """A key (or click) came: no collection until its work is on screen."""
        if not self._started:
            return
        self._last_key = time.monotonic()
        gc.disable()

    def idle(self) -> bool:
        """No key (or click) for ``HOLD_S``: work nobody waits for may run now."""
        return time.monotonic() - self._last_key >= HOLD_S

    def tick(self) -> None:
        """Let the collector run again once keys have paused; while they go on, collect only
        the young generations once allocations pile up (a few ms, not a full pass)."""
        if not self._started or gc.isenabled() or not self._was_enabled:
            return
        if time.monotonic() - self._last_key >= HOLD_S:
            gc.enable()
        elif gc.get_count()[0] >= HOLD_ALLOCATIONS:
            gc.collect(1)

    def stop(self) -> None:
        """Give the collector back as it was before ``start``."""
        if not self._started:
            return
        self._started = False
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()
