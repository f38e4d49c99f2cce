"""How fast a run goes: elapsed time, folds per second and the time left, from counts alone."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pace:
    """A run's speed so far and what it predicts."""

    elapsed_s: float
    folds_per_s: float
    eta_s: float | None
    """Seconds until every row has finished at the pace so far; None before a row finished in
    this run (or once none is left to wait for)."""


def run_pace(elapsed_s: float, folds: int, finished: int, remaining: int) -> Pace:
    """The pace of one run from what it did itself (rows finished by an earlier run don't count).

    Args:
        elapsed_s: seconds since this run started (a paused stretch included).
        folds: folds this run committed.
        finished: rows this run finished (done or failed for good).
        remaining: rows still to finish.

    Returns:
        Elapsed time, folds per second and the ETA (None when it cannot be estimated yet).
    """
    elapsed = max(0.0, elapsed_s)
    rate = folds / elapsed if elapsed > 0 else 0.0
    eta = None
    if finished > 0 and remaining > 0:
        eta = elapsed / finished * remaining
    elif remaining == 0 and finished > 0:
        eta = 0.0
    return Pace(elapsed, rate, eta)


def format_rate(folds_per_s: float | None) -> str:
    """A fold rate as shown: folds/s to one decimal, or folds/min below 0.1 folds/s (a model on a
    CPU folds a few a minute, which would read "0.0 folds/s")."""
    rate = folds_per_s or 0.0
    if 0 < rate < 0.1:
        return f"{rate * 60:.1f} folds/min"
    return f"{rate:.1f} folds/s"


def format_duration(seconds: float) -> str:
    """Seconds as H:MM:SS (or M:SS under an hour)."""
    seconds = max(0, int(round(seconds)))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
