"""Turn a sweep definition into a stored plan, or find the sweep it resumes; shared by CLI and TUI."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foldscope.core.errors import ConfigError
from foldscope.engine.store import Store
from foldscope.engine.sweep import SweepConfig, build_config, new_sweep_id, plan_rows


@dataclass(frozen=True)
class Prepared:
    """A sweep ready to run: its id and whether it was resumed rather than newly planned."""

    sweep_id: str
    resumed: bool
    rows: int


def prepare_sweep(db_path: str | Path, data: dict[str, Any], source: str, *,
                  fresh: bool = False) -> Prepared:
    """Validate a definition and store its plan, or resume the sweep planned from it before.

    Args:
        db_path: the database.
        data: the definition (``{"sweep": {...}, "models": [...]}``).
        source: where it came from, for error messages (a file name or "command line").
        fresh: plan a new sweep even if an identical one exists.
    """
    config = build_config(data, source)
    digest = config.digest()
    # Look and plan in one write transaction: of several processes planning one definition
    # together, one plans it and the others find its sweep.
    with Store(db_path) as store, store.immediate():
        if not fresh:
            existing = store.sweep_by_digest(digest)
            if existing is not None:
                return Prepared(existing, True, len(store.rows(existing)))
        return _create(store, config, digest)


def _create(store: Store, config: SweepConfig, digest: str) -> Prepared:
    sweep_id = new_sweep_id()
    rows = plan_rows(config)
    simulated = all(str(m["id"]).startswith("sim/") for m in config.models)
    store.create_sweep({"id": sweep_id, "name": config.sweep.name, "config_digest": digest,
                        "config": config.model_dump(mode="json"), "simulated": simulated}, rows)
    return Prepared(sweep_id, False, len(rows))


def check_credentials(config: SweepConfig) -> None:
    """Refuse to start when a model's API key variable is unset (named, never printed)."""
    from foldscope.engine.models import resolve_model

    for entry in config.models:
        cfg = resolve_model(entry["id"], {k: v for k, v in entry.items() if k != "id"} or None)
        if cfg.api_key_env and not os.environ.get(cfg.api_key_env):
            raise ConfigError(f"model '{cfg.id}': environment variable {cfg.api_key_env} "
                              "(api_key_env) is not set")


def stored_config(db_path: str | Path, sweep_id: str) -> SweepConfig:
    """The validated definition of a stored sweep."""
    with Store(db_path) as store:
        sweep = store.sweep(sweep_id)
    if sweep is None:
        raise ConfigError(f"{db_path}: no sweep '{sweep_id}'")
    return SweepConfig.model_validate(sweep["config"])


def check_resumable(db_path: str | Path, sweep_id: str) -> None:
    """Raise a one-line error unless the database holds this sweep."""
    with Store(db_path) as store:
        if store.sweep(sweep_id) is None:
            known = ", ".join(s["id"] for s in store.sweeps()[:5]) or "none"
            raise ConfigError(f"{db_path}: no sweep '{sweep_id}' to resume (recent: {known})")
