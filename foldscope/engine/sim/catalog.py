"""The built-in simulated models: names, one-line descriptions and their built-in endpoint faults."""

from __future__ import annotations

from foldscope.engine.sim.faults import FaultConfig

SIM_PREFIX = "sim/"

TEMPERAMENTS: dict[str, str] = {
    "faithful": "partitions faithfully: carries every fact line within the declared ceilings; "
                "where a ceiling cannot hold them all (arm f's 1,024 characters against "
                "kestrel's ~2,460 characters of planted facts) it drops the oldest and scores low",
    "describer": "fills an undivided slot with description (counts, not values); divided fields "
                 "or headings make it keep identifiers",
    "gister": "writes a short gist whatever the shape; keeps at most two values per fold",
    "inventor": "folds like the gister; at recall invents values for lost labels, mostly stock "
                "stand-ins (port 8080, a time on the hour, example.com, a documentation UUID)",
    "garbler": "carries every fact like the faithful, but alters a fifth of the identifier "
               "values in each fold (a transposed hex pair, a dropped digit, a truncated UUID, "
               "a changed minute)",
    "reasoning-mandatory": "faithful, behind an endpoint that refuses requests disabling reasoning",
    "no-reasoning-param": "faithful, behind a gateway with no endpoint for the reasoning parameter",
    "nonconforming": "faithful, but its JSON replies omit a required property",
}
"""Built-in sim names (without the ``sim/`` prefix) and what each does."""

BEHAVIOUR: dict[str, str] = {
    "reasoning-mandatory": "faithful",
    "no-reasoning-param": "faithful",
    "nonconforming": "faithful",
}
"""Fault sims borrow another temperament's summarising behaviour."""

BUILTIN_FAULTS: dict[str, FaultConfig] = {
    "reasoning-mandatory": FaultConfig(reasoning_mandatory=True),
    "no-reasoning-param": FaultConfig(refuse_reasoning_param=True),
    "nonconforming": FaultConfig(rate_nonconforming=1.0),
}
"""Faults that belong to a built-in sim's endpoint whatever the configuration says."""

SIM_ENDPOINT_TAG = "foldscope-sim"
"""The provider slug of the one endpoint each sim has; built-in sims are pinned to it."""


def builtin_ids() -> list[str]:
    """Return the built-in sim model ids (``sim/faithful``, …) in catalog order."""
    return [SIM_PREFIX + name for name in TEMPERAMENTS]


def temperament_of(wire_model: str) -> str | None:
    """Return the temperament name a wire model name selects, or None.

    ``sim/faithful`` and tagged variants such as ``sim/faithful:slow`` select ``faithful``.
    """
    if not wire_model.startswith(SIM_PREFIX):
        return None
    name = wire_model[len(SIM_PREFIX):].split(":", 1)[0]
    return name if name in TEMPERAMENTS else None


def behaviour_of(temperament: str) -> str:
    """Return the summarising behaviour a temperament uses (fault sims fold like faithful)."""
    return BEHAVIOUR.get(temperament, temperament)
