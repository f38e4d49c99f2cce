"""No seed is sent by default (the study sent none); a sweep's `seed` sends one and is recorded."""

import argparse
import json

import httpx
import pytest
from conftest import definition, run_sweep

from foldscope.cli.run_cmd import definition_from_args, register
from foldscope.engine.sim.transport import SimTransport
from foldscope.engine.store import Store
from foldscope.engine.sweep import SweepSection


class Recording(SimTransport):
    """The in-process simulated endpoint, keeping every request body it answered."""

    def __init__(self) -> None:
        super().__init__(latency_scale=0.0)
        self.bodies: list[dict] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raw = await request.aread()
        if request.url.path.endswith("/chat/completions") and raw:
            self.bodies.append(json.loads(raw))
        return await super().handle_async_request(request)


def _sweep(db, **sweep):
    data = definition(repeats=2, **sweep)
    if "seed" not in sweep:
        del data["sweep"]["seed"]
    transport = Recording()
    sweep_id = run_sweep(db, data, transport=transport)
    with Store(db, readonly=True) as store:
        config = store.sweep(sweep_id).config
    return transport.bodies, config


def test_no_seed_is_sent_by_default(tmp_path):
    bodies, config = _sweep(tmp_path / "a.sqlite")
    assert bodies and not any("seed" in b for b in bodies)
    assert config["sweep"]["seed"] is None


def test_a_sweep_seed_is_sent_per_repeat_and_recorded(tmp_path):
    bodies, config = _sweep(tmp_path / "b.sqlite", seed=5)
    seeds = {b["seed"] for b in bodies}
    assert seeds == {5 * 1_000_003, 5 * 1_000_003 + 1}  # one per repeat
    assert config["sweep"]["seed"] == 5


@pytest.mark.parametrize(("sweep_seed", "model_seed", "repeat", "sent"), [
    (None, None, 0, None), (None, None, 3, None), (0, None, 2, 2), (5, None, 1, 5_000_016),
    (None, 7, 1, 8), (2, 7, 0, 2_000_013),
])
def test_request_seed(sweep_seed, model_seed, repeat, sent):
    section = SweepSection(arms=["j"], seed=sweep_seed)
    assert section.request_seed(model_seed, repeat) == sent


def test_seed_flag_reaches_the_sweep():
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["run", "--arms", "j", "--seed", "9"])
    assert definition_from_args(args)[0]["sweep"]["seed"] == 9
    args = parser.parse_args(["run", "--arms", "j"])
    assert "seed" not in definition_from_args(args)[0]["sweep"]
