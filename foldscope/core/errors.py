"""The error types foldscope raises for bad input; each carries one line naming what is wrong."""

from __future__ import annotations


class FoldscopeError(Exception):
    """Base for every user-facing error. ``str(err)`` is a single line fit for stderr."""


class ScenarioError(FoldscopeError):
    """A scenario file is missing, malformed, or fails its load-time checks."""


class UnknownScenario(ScenarioError):
    """No scenario of that name exists."""


class ArmError(FoldscopeError):
    """An arm id is unknown or an arm definition breaks a catalog rule."""


class ModelError(FoldscopeError):
    """A model id is unknown or its configuration is invalid."""


class ConfigError(FoldscopeError):
    """A sweep or model configuration file is malformed."""


class StoreError(FoldscopeError):
    """The database cannot be used (corrupt, newer schema, wrong file)."""


class SweepClaimed(StoreError):
    """Another live process is already running the sweep: a reader watches it instead."""

    def __init__(self, message: str, pid: int) -> None:
        super().__init__(message)
        self.pid = pid
        """The process running the sweep."""


class FlagRefused(FoldscopeError):
    """A person's verdict cannot be put on that answer (correct, an abstention, empty)."""


class StatsError(FoldscopeError, ValueError):
    """Arguments a statistic cannot be computed from (a bad count, margin, or too few values)."""


class EvidenceError(FoldscopeError):
    """An evidence package cannot be written or read (bad output folder, malformed CSV)."""


class SessionError(FoldscopeError):
    """An agent session file cannot be read (missing, unreadable, unknown format)."""
