"""Sweep definitions: the TOML file and flags, validation, and the stored plan of rows."""

from __future__ import annotations

import hashlib
import json
import tomllib
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from foldscope.core.arms import get_arm
from foldscope.core.designs import DEFAULT_MODE, LEGACY_MODE, execution_order
from foldscope.core.errors import ConfigError, FoldscopeError
from foldscope.core.nesting import NestingError, loads_toml
from foldscope.core.row import PlannedRow
from foldscope.core.text import ID_MAX_CHARS, check_field
from foldscope.engine.loader import load_scenario

if TYPE_CHECKING:
    from foldscope.engine.models import ModelConfig


class RateLimit(BaseModel):
    """One provider's limits: calls in flight and call starts per minute."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int | None = Field(None, ge=1, le=1024, strict=True)
    rpm: int | None = Field(None, ge=1, strict=True)


class SweepSection(BaseModel):
    """The ``[sweep]`` table of a sweep file (strict types: ``repeats = "2"`` is refused, not
    read as 2)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = "sweep"
    scenario: str | None = None
    scenarios: list[str] = Field(default_factory=list)
    arms: list[str]
    repeats: int = Field(1, ge=1, le=10_000)
    design: Literal["latin", "williams"] = "latin"
    concurrency: int = Field(8, ge=1, le=1024)
    """Rows in flight at once (in ``sequential`` mode: model x repeat sequences); also the
    default cap on calls in flight per provider."""
    mode: Literal["sequential", "blocked", "free"] = DEFAULT_MODE
    """How rows are scheduled (see ``EXECUTION_MODES``)."""
    seed: int | None = None
    """Send a seed with every request: this, offset per repeat (and by a model's own ``seed``).
    None (the default, as in the study): no seed is sent unless a model declares one."""
    max_row_retries: int = Field(2, ge=0, le=100)
    budget_usd: float | None = Field(None, ge=0, allow_inf_nan=False)
    budget_tokens: int | None = Field(None, ge=0)
    cache: bool | None = None
    """Replay identical requests from the response cache.

    None (the default): on for temperature-0 models of real providers, off for simulated ones
    (asking them again costs nothing) and for temperature above 0.
    """
    rate_limits: dict[str, int | RateLimit] = Field(default_factory=dict)
    """Per provider: calls in flight (``openrouter = 8``) or ``{concurrency = 8, rpm = 120}``.

    The limit applies to each endpoint of that provider (one base URL); every simulated model
    is an endpoint of its own."""

    def request_seed(self, model_seed: int | None, repeat: int) -> int | None:
        """The seed sent with a row's requests, or None to send none.

        Nothing is sent unless the sweep or the model sets a seed; when one does, each repeat
        gets its own (repeats are separate draws, and a rerun of the sweep is reproducible).

        Args:
            model_seed: the model's own ``seed`` from its config, if any.
            repeat: the row's repeat number.

        Returns:
            ``model_seed + sweep seed × 1,000,003 + repeat``, or None.
        """
        if self.seed is None and model_seed is None:
            return None
        return (model_seed or 0) + (self.seed or 0) * 1_000_003 + repeat

    def rate_limit(self, provider: str) -> RateLimit:
        """The limits for one provider: its table, or the sweep's concurrency alone."""
        entry = self.rate_limits.get(provider)
        if entry is None:
            return RateLimit(concurrency=self.concurrency)
        if isinstance(entry, int):
            return RateLimit(concurrency=min(entry, self.concurrency))
        return RateLimit(concurrency=min(entry.concurrency or self.concurrency, self.concurrency),
                         rpm=entry.rpm)

    @field_validator("name")
    @classmethod
    def _name_text(cls, name: str) -> str:
        return check_field(name, limit=ID_MAX_CHARS)

    @field_validator("scenario")
    @classmethod
    def _scenario_text(cls, name: str | None) -> str | None:
        return name if name is None else check_field(name, limit=ID_MAX_CHARS)

    @field_validator("scenarios")
    @classmethod
    def _scenarios_text(cls, names: list[str]) -> list[str]:
        seen: set[str] = set()
        for name in names:
            check_field(name, limit=ID_MAX_CHARS)
            if name in seen:
                raise ValueError(f"scenario '{name}' is listed twice")
            seen.add(name)
        return names

    @field_validator("arms")
    @classmethod
    def _known_arms(cls, arms: list[str]) -> list[str]:
        if not arms:
            raise ValueError("at least one arm is required")
        for arm in arms:
            check_field(arm, limit=ID_MAX_CHARS)  # before any message quotes it
            get_arm(arm)
        if len(set(arms)) != len(arms):
            raise ValueError("an arm is listed twice")
        return arms

    def scenario_names(self) -> list[str]:
        """Every scenario the sweep runs, in order."""
        names = list(self.scenarios)
        if self.scenario and self.scenario not in names:
            names.insert(0, self.scenario)
        return names


class ModelEntry(BaseModel):
    """One ``[[models]]`` entry as written: a model id and the fields laid over its defaults.

    Kept as written (not resolved): the stored definition and its digest are what the person
    asked for, so an unchanged definition resumes its sweep, and a built-in model's defaults
    are read when the sweep runs. :meth:`resolve` gives the typed ``ModelConfig``.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str
    """The model id (``sim/faithful``, ``qwen3-235b@deepinfra``)."""

    @property
    def overrides(self) -> dict[str, Any]:
        """The entry's fields other than ``id`` (``ModelConfig`` fields, checked on resolve)."""
        return dict(self.model_extra or {})

    def resolve(self) -> ModelConfig:
        """The model's configuration (``engine.models.resolve_model``).

        Raises:
            ModelError: the id is unknown or a field is invalid.
        """
        from foldscope.engine.models import resolve_model

        return resolve_model(self.id, self.overrides or None)


class SweepConfig(BaseModel):
    """A whole sweep definition: the ``[sweep]`` table and its ``[[models]]``."""

    model_config = ConfigDict(extra="forbid")

    sweep: SweepSection
    models: list[ModelEntry]

    @property
    def model_ids(self) -> tuple[str, ...]:
        """The model ids, in the definition's order."""
        return tuple(m.id for m in self.models)

    def digest(self) -> str:
        """A digest of the definition; re-running an identical definition resumes its sweep.

        The default mode is left out, so a definition written before modes existed still
        resumes the sweep it planned then.
        """
        data = self.model_dump(mode="json")
        if data["sweep"]["mode"] == DEFAULT_MODE:
            del data["sweep"]["mode"]
        blob = json.dumps(data, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def stored_mode(config: dict[str, Any]) -> str:
    """The execution mode of a stored sweep definition (``sequential`` if it predates modes)."""
    return str(config["sweep"].get("mode", LEGACY_MODE))


@dataclass(frozen=True)
class StoredDefinition:
    """A stored sweep definition validated once into a ``SweepConfig``: what the runner runs
    and what the live view, the sweep listing, the report and the study show of it."""

    config: SweepConfig
    """The whole definition, validated."""
    mode: str
    """The execution mode (``sequential`` for a definition that predates modes)."""

    @property
    def section(self) -> SweepSection:
        """The ``[sweep]`` table."""
        return self.config.sweep

    @property
    def models(self) -> tuple[str, ...]:
        """The model ids, in the definition's order."""
        return self.config.model_ids

    @property
    def scenarios(self) -> tuple[str, ...]:
        """Every scenario the sweep runs, in order."""
        return tuple(self.section.scenario_names())

    @property
    def arms(self) -> tuple[str, ...]:
        """The arms, in the definition's order."""
        return tuple(self.section.arms)


def stored_definition(config: dict[str, Any]) -> StoredDefinition:
    """Read a stored definition (plain data, as the store returns it) once.

    Raises:
        KeyError, ValueError: the stored data is not a sweep definition (``foldscope check``
            names what is wrong).
    """
    return StoredDefinition(SweepConfig.model_validate(config), stored_mode(config))


def _format_error(source: str, err: Any) -> str:
    loc = [str(p) for p in err["loc"]]
    where = ".".join(loc) or "(top level)"
    msg = err["msg"].removeprefix("Value error, ")
    if source == "command line" and len(loc) == 2 and loc[0] == "sweep":
        where = f"--{loc[1].replace('_', '-')}"  # name the flag the person typed
    return f"{source}: {where}: {msg}"


def sweep_problems(data: dict[str, Any], source: str) -> list[str]:
    """Every problem with sweep data at once (empty: valid), each one line naming the source,
    the field and the problem — the fields' rules, then the scenarios and models named.

    ``build_config`` raises the first; the TUI's form shows them all.
    """
    return [str(problem) for problem in _problems(data, source)]


def _problems(data: dict[str, Any], source: str) -> list[FoldscopeError]:
    from foldscope.engine.models import resolve_model

    problems: list[FoldscopeError] = []
    config: SweepConfig | None = None
    checked = data
    sweep_table = data.get("sweep") if isinstance(data, dict) else None
    arms = sweep_table.get("arms") if isinstance(sweep_table, dict) else None
    if isinstance(sweep_table, dict) and isinstance(arms, list):
        # An unknown arm stops pydantic outright (ArmError): name each one, then check the
        # rest of the definition without them so its other problems are found too.
        unknown = []
        for arm in arms:
            try:
                check_field(arm, limit=ID_MAX_CHARS)
                get_arm(arm)
            except FoldscopeError as exc:
                problems.append(exc)
                unknown.append(arm)
            except (ValueError, TypeError):
                pass  # the field's own rule words it
        if unknown:
            known = [a for a in arms if a not in unknown]
            checked = {**data, "sweep": {**sweep_table, "arms": known or ["j"]}}
    try:
        config = SweepConfig.model_validate(checked)
    except ValidationError as exc:
        for err in exc.errors(include_url=False, include_input=False):
            loc = err["loc"]
            if len(loc) >= 3 and loc[0] == "models" and loc[2] == "id":
                continue  # a model entry's id is worded below, from the raw data, once
            if len(loc) == 2 and loc[0] == "models" and err["type"] == "model_type":
                err = {**err, "msg": "Input should be a valid dictionary"}  # a table, in TOML
            problems.append(ConfigError(_format_error(source, err)))
    if config is not None:
        names = config.sweep.scenario_names()
        models: Any = [m.model_dump() for m in config.models]
    else:  # the raw data, so a bad count does not hide an unknown scenario or model
        sweep = data.get("sweep") if isinstance(data, dict) else None
        sweep = sweep if isinstance(sweep, dict) else {}
        listed = sweep.get("scenarios")
        names = [n for n in ([sweep.get("scenario")] + (listed if isinstance(listed, list)
                                                         else [])) if isinstance(n, str) and n]
        names = list(dict.fromkeys(names))
        models = data.get("models") if isinstance(data, dict) else None
        models = models if isinstance(models, list) else []
    if config is not None and not names:
        problems.append(ConfigError(f"{source}: sweep.scenario: no scenario given"))
    if not models and config is not None:
        problems.append(ConfigError(f"{source}: models: no model given"))
    for name in names:
        try:
            load_scenario(name)
        except FoldscopeError as exc:
            problems.append(exc)
    seen = set()
    for i, entry in enumerate(models):
        if not isinstance(entry, dict) or "id" not in entry:
            problems.append(ConfigError(f"{source}: models[{i}].id: required"))
            continue
        if not isinstance(entry["id"], str):
            problems.append(ConfigError(f"{source}: models[{i}].id: must be a string"))
            continue
        try:
            check_field(entry["id"], limit=ID_MAX_CHARS)
        except ValueError as exc:
            problems.append(ConfigError(f"{source}: models[{i}].id: {exc}"))
            continue
        if entry["id"] in seen:
            problems.append(ConfigError(f"{source}: models[{i}].id: model '{entry['id']}' listed twice"))
            continue
        seen.add(entry["id"])
        try:
            resolve_model(entry["id"], {k: v for k, v in entry.items() if k != "id"} or None)
        except FoldscopeError as exc:
            problems.append(exc)
    return problems


def build_config(data: dict[str, Any], source: str) -> SweepConfig:
    """Validate sweep data (from TOML and/or flags), checking scenarios, arms and models exist.

    Raises:
        ConfigError: one line naming the source, the field and the problem (the first of
            ``sweep_problems``).
    """
    problems = _problems(data, source)
    if problems:
        raise problems[0]
    return SweepConfig.model_validate(data)


def load_sweep_file(path: str | Path) -> dict[str, Any]:
    """Read a sweep TOML file into plain data (validated later with the flags merged in)."""
    p = Path(path)
    try:
        return loads_toml(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such sweep file") from None
    except (tomllib.TOMLDecodeError, NestingError) as exc:
        raise ConfigError(f"{p}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not UTF-8 text") from None
    except OSError as exc:  # a folder, a special file, no permission
        raise ConfigError(f"{p}: cannot read sweep file ({exc.strerror or exc})") from None


def plan_rows(config: SweepConfig) -> list[PlannedRow]:
    """Lay out every row of the sweep with its execution position.

    Within each repeat, every model runs the arms in that repeat's sequence of the execution
    design (a rotating Latin square or a Williams design), so each arm leads equally often;
    the models take each step of the sequence side by side.
    """
    s = config.sweep
    sequences = execution_order(s.arms, s.repeats, s.design)
    rows: list[PlannedRow] = []
    for scenario in s.scenario_names():
        for repeat, sequence in enumerate(sequences):
            # Models are interleaved step by step, so every model's column fills together while
            # each model x repeat still runs its arms in the design's order.
            for arm_id in sequence:
                for entry in config.models:
                    arm = get_arm(arm_id)
                    rows.append(PlannedRow(
                        position=len(rows), scenario=scenario, model=entry.id, arm=arm_id,
                        repeat=repeat, prompt_digest=arm.prompt_digest,
                        declared_ceilings=arm.declared_ceilings,
                        output_budget=arm.output_budget, carry_cap=arm.carry_cap))
    return rows


def new_sweep_id() -> str:
    """A short unique sweep id."""
    return uuid.uuid4().hex[:10]
