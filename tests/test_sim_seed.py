"""A simulated reply's random choices are seeded by the request body's digest, computed only when
the reply draws (``engine.sim.endpoint.SeededOnUse``): the same draws as a ``random.Random``
seeded at once, and no sha256 of a ~100 kB body for a reply that draws nothing."""

from __future__ import annotations

import hashlib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.engine.sim import endpoint as endpoint_module
from foldscope.engine.sim.endpoint import SeededOnUse, SimEndpoint, body_seed
from foldscope.engine.wire import body_digest

# Every draw the temperaments make (engine.sim.temperaments), and the rest of Random's surface.
_DRAWS = {
    "random": lambda r, n: r.random(),
    "uniform": lambda r, n: r.uniform(0.25, 1.75),
    "choice": lambda r, n: r.choice(range(n + 1)),
    "sample": lambda r, n: r.sample(range(n + 2), min(2, n + 2)),
    "shuffle": lambda r, n: (lambda xs: (r.shuffle(xs), xs)[1])(list(range(n + 1))),
    "randint": lambda r, n: r.randint(0, n),
    "getrandbits": lambda r, n: r.getrandbits(n % 70 + 1),
    "randrange": lambda r, n: r.randrange(1, n + 2),
    "choices": lambda r, n: r.choices(range(n + 1), k=3),
    "gauss": lambda r, n: r.gauss(0.0, 1.0),
    "randbytes": lambda r, n: r.randbytes(n % 9),
}


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**64 - 1),
       draws=st.lists(st.tuples(st.sampled_from(sorted(_DRAWS)), st.integers(0, 200)),
                      max_size=25))
def test_draws_are_those_of_a_random_seeded_at_once(seed, draws):
    lazy, eager = SeededOnUse(lambda: seed), random.Random(seed)
    for name, n in draws:
        assert _DRAWS[name](lazy, n) == _DRAWS[name](eager, n), name


def test_the_seed_is_asked_for_once_and_only_when_drawn():
    asked = []
    rng = SeededOnUse(lambda: asked.append(1) or 7)
    assert asked == []
    first = [rng.random(), rng.choice("abcdef"), rng.getrandbits(12)]
    assert asked == [1]
    again = random.Random(7)
    assert first == [again.random(), again.choice("abcdef"), again.getrandbits(12)]


def test_body_seed_is_the_digest_of_the_body_digest():
    body = {"model": "sim/describer", "messages": [{"role": "user", "content": "é" * 5000}],
            "seed": 3}
    digest = body_digest(body)
    assert body_seed(body) == int(hashlib.sha256(digest.encode()).hexdigest()[:16], 16)


def _fold_body(model: str, seed: int) -> dict:
    from foldscope.core.arms import get_arm
    from foldscope.core.fold import fold_call
    from foldscope.engine.loader import load_scenario

    sc = load_scenario("kestrel")
    arm = get_arm("j")
    spec = fold_call(arm, "", [sc.chunks[0].text], 0, len(sc.chunks))
    body = {"model": model, "messages": spec.messages, "max_tokens": spec.max_tokens,
            "seed": seed}
    if spec.response_format is not None:
        body["response_format"] = spec.response_format
    return body


def test_a_faithful_fold_hashes_no_body_and_a_describer_fold_hashes_it_once(monkeypatch):
    hashed = []
    real = endpoint_module.body_digest
    monkeypatch.setattr(endpoint_module, "body_digest",
                        lambda body: hashed.append(1) or real(body))
    sim = SimEndpoint()
    for model, expected in (("sim/faithful", 0), ("sim/describer", 1)):
        hashed.clear()
        resp = sim.respond("POST", "/v1/chat/completions", {}, b"",
                           parsed=_fold_body(model, 5))
        assert resp.status == 200
        assert len(hashed) == expected, model


def test_replies_and_their_ids_are_the_same_on_every_call_and_differ_by_seed():
    sim = SimEndpoint()
    one = sim.respond("POST", "/v1/chat/completions", {}, b"", parsed=_fold_body("sim/faithful", 1))
    same = SimEndpoint().respond("POST", "/v1/chat/completions", {}, b"",
                                 parsed=_fold_body("sim/faithful", 1))
    other = sim.respond("POST", "/v1/chat/completions", {}, b"",
                        parsed=_fold_body("sim/faithful", 2))
    assert one.body == same.body
    assert one.body != other.body  # the same carrier, another id: the seed differs
