"""Names the command line offers before it loads the engine: session formats, the environment
variables that point at rule files, the export's answer prefix.

Every ``foldscope`` command registers its arguments at start-up (``foldscope --help`` lists them
all), so these live apart from the modules that use them, which import them from here.
"""

from __future__ import annotations

SESSION_FORMATS: tuple[str, ...] = ("auto", "claude-code", "codex", "pi", "inspect", "jsonl")
"""Session file formats ``foldscope audit`` reads (``engine.audit_readers``)."""

KINDS_ENV = "FOLDSCOPE_IDENTIFIER_KINDS"
"""Environment variable naming an extra identifier-kinds file (``engine.kinds_file``)."""

SIGNATURES_ENV = "FOLDSCOPE_SIGNATURES"
"""Environment variable naming a user stock-value signatures file (``engine.rulefiles``)."""

DEFAULT_ANSWER_PREFIX = 80
"""Characters of each answer an evidence package keeps by default (``engine.evidence``)."""
