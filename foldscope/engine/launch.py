"""Turn a sweep definition into a stored plan, or find the sweep it resumes; shared by CLI and TUI."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foldscope.core.errors import ConfigError, FoldscopeError
from foldscope.core.status import FINISHED_SWEEP_STATUSES
from foldscope.engine.store import NewSweep, Store
from foldscope.engine.sweep import (
    SweepConfig,
    build_config,
    load_sweep_file,
    new_sweep_id,
    plan_rows,
    stored_definition,
)


@dataclass(frozen=True)
class Prepared:
    """A sweep ready to run: its id and whether it was resumed rather than newly planned."""

    sweep_id: str
    resumed: bool
    rows: int


FINISHED_STATUSES = FINISHED_SWEEP_STATUSES
"""Sweep statuses with nothing left to run (``failed``: every row failed)."""


def prepare_sweep(db_path: str | Path, data: dict[str, Any], source: str, *,
                  fresh: bool = False, fresh_if_finished: bool = False) -> Prepared:
    """Validate a definition and store its plan, or resume the sweep planned from it before.

    Args:
        db_path: the database.
        data: the definition (``{"sweep": {...}, "models": [...]}``).
        source: where it came from, for error messages (a file name or "command line").
        fresh: plan a new sweep even if an identical one exists.
        fresh_if_finished: resume the newest identical sweep only while it is unfinished
            (planned, running, paused, stopped, interrupted); plan a new one when it is done
            or every row failed (the demo: a person expects a live sweep to watch).
    """
    config = build_config(data, source)
    digest = config.digest()
    # Look and plan in one write transaction: of several processes planning one definition
    # together, one plans it and the others find its sweep.
    with Store(db_path) as store, store.immediate():
        if not fresh:
            existing = store.sweep_by_digest(digest)
            if existing is not None and fresh_if_finished:
                found = store.sweep(existing)
                if found is None or found.status in FINISHED_STATUSES:
                    existing = None
            if existing is not None:
                return Prepared(existing, True, len(store.rows(existing)))
        return _create(store, config, digest)


def _create(store: Store, config: SweepConfig, digest: str) -> Prepared:
    sweep_id = new_sweep_id()
    rows = plan_rows(config)
    simulated = all(m.id.startswith("sim/") for m in config.models)
    store.create_sweep(NewSweep(sweep_id, config.sweep.name, digest,
                                config.model_dump(mode="json"), simulated), rows)
    return Prepared(sweep_id, False, len(rows))


def check_credentials(config: SweepConfig) -> None:
    """Refuse to start when a model's API key variable is unset or holds what an HTTP header
    cannot carry (named, never printed)."""
    from foldscope.engine.keys import key_problem

    for entry in config.models:
        cfg = entry.resolve()
        if cfg.api_key_env and not os.environ.get(cfg.api_key_env):
            raise ConfigError(f"model '{cfg.id}': environment variable {cfg.api_key_env} "
                              "(api_key_env) is not set")
        problem = key_problem(os.environ[cfg.api_key_env]) if cfg.api_key_env else None
        if problem is not None:  # an HTTP header could not carry it: say so before any call
            raise ConfigError(f"model '{cfg.id}': environment variable {cfg.api_key_env} "
                              f"(api_key_env) {problem}")


def stored_config(db_path: str | Path, sweep_id: str) -> SweepConfig:
    """The validated definition of a stored sweep."""
    with Store(db_path) as store:
        sweep = store.sweep(sweep_id)
    if sweep is None:
        raise ConfigError(f"{db_path}: no sweep '{sweep_id}'")
    return stored_definition(sweep.config).config


def check_resumable(db_path: str | Path, sweep_id: str) -> None:
    """Raise a one-line error unless the database holds this sweep."""
    with Store(db_path) as store:
        if store.sweep(sweep_id) is None:
            known = ", ".join(s.id for s in store.sweeps()[:5]) or "none"
            raise ConfigError(f"{db_path}: no sweep '{sweep_id}' to resume (recent: {known})")


@dataclass(frozen=True)
class SweepFields:
    """What a person gives besides (or over) a sweep file: the CLI's flags, the TUI's form.

    Lists are comma-separated text, as typed; None leaves the file's value (or the default).
    """

    sweep_file: str | None = None
    scenario: str | None = None
    models: str | None = None
    arms: str | None = None
    repeats: int | None = None
    design: str | None = None
    concurrency: int | None = None
    mode: str | None = None
    seed: int | None = None


def whole_number(text: str, name: str) -> int | None:
    """A count typed into a form (blank: not given), or a one-line error naming the field."""
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{name}: must be a whole number (got {text!r})") from None


def definition_from_fields(fields: SweepFields) -> tuple[dict[str, Any], str]:
    """Merge the sweep file (if any) with the fields; fields win. Returns (data, source name).

    The one merge the CLI's ``run``/``plan`` and the TUI's form share, so both validate alike
    (``build_config`` then checks the whole definition).
    """
    data, source = _merge_fields(fields)
    if "arms" not in data["sweep"]:
        raise ConfigError(NO_ARMS.format(source=source))
    return data, source


NO_ARMS = "{source}: sweep.arms: required (or pass --arms)"


def _merge_fields(fields: SweepFields) -> tuple[dict[str, Any], str]:
    data: dict[str, Any] = {"sweep": {}, "models": []}
    source = "command line"
    if fields.sweep_file:
        data = load_sweep_file(fields.sweep_file)
        data.setdefault("sweep", {})
        data.setdefault("models", [])
        source = fields.sweep_file
    s = data["sweep"]
    if not isinstance(s, dict):
        raise ConfigError(f"{source}: sweep: must be a table")
    if fields.scenario:
        names = [n.strip() for n in fields.scenario.split(",") if n.strip()]
        s.pop("scenarios", None)
        s["scenario"] = names[0]
        if len(names) > 1:
            s["scenarios"] = names
    if fields.arms:
        s["arms"] = [a.strip() for a in fields.arms.split(",") if a.strip()]
    for key in ("repeats", "design", "concurrency", "mode", "seed"):
        value = getattr(fields, key)
        if value is not None:
            s[key] = value
    if fields.models:
        by_id = {m.get("id"): m for m in data["models"] if isinstance(m, dict)}
        data["models"] = [by_id.get(mid.strip(), {"id": mid.strip()})
                          for mid in fields.models.split(",") if mid.strip()]
    return data, source


def field_problems(fields: SweepFields) -> list[str]:
    """Every problem the fields (and their sweep file) have, at once, by ``foldscope run``'s
    rules — the definition's, then an unset API key variable; empty when the sweep can start.
    The TUI's form lists them all (the CLI stops at the first)."""
    from foldscope.engine.sweep import sweep_problems

    try:
        data, source = _merge_fields(fields)
    except FoldscopeError as exc:  # no definition to check further (a file that cannot be read)
        return [str(exc)]
    problems = sweep_problems(data, source)
    if "arms" not in data["sweep"]:  # the one message the CLI gives, in place of pydantic's
        problems = [NO_ARMS.format(source=source),
                    *(p for p in problems if not p.startswith(f"{source}: sweep.arms:"))]
    if not problems:
        try:
            check_credentials(build_config(data, source))
        except FoldscopeError as exc:
            problems.append(str(exc))
    return problems


def start_from_fields(db_path: str | Path, fields: SweepFields) -> Prepared:
    """Validate the fields as ``foldscope run`` does and store the plan (or find the sweep an
    identical definition planned); refuse one whose API key variable is unset."""
    data, source = definition_from_fields(fields)
    prepared = prepare_sweep(db_path, data, source)
    check_credentials(stored_config(db_path, prepared.sweep_id))
    return prepared
