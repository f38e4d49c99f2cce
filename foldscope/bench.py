"""``make bench``: the harness's own cost on the kestrel scenario with in-process simulated models.

Prints and writes to ``bench-results.json``:

- ``cpu_ms_per_fold`` / ``folds_per_s``: harness CPU per fold at zero simulated latency,
  including the simulated model, the SQLite commit and per-fold fact tracking;
- ``latency_efficiency``: achieved call throughput ÷ (concurrency ÷ latency) with 1 s simulated
  latency at concurrency 64 (1.0 means the harness never leaves a slot idle);
- ``latency_efficiency_few_sequences``: 1 model × 2 repeats × 12 arms at concurrency 24 with
  1 s simulated latency, in the default (blocked) execution mode: mean calls in flight ÷ 24
  over the run (calls × latency ÷ wall time ÷ 24);
- ``peak_rss_mb`` / ``db_bytes_per_fold``: peak resident memory of a 1,000-row sweep and the
  database size it leaves, per fold.

Each measurement runs in a fresh subprocess so that one cannot inflate another's memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODELS = ("sim/faithful", "sim/describer")


def _definition(arms: list[str], repeats: int, models: list[dict[str, Any]],
                concurrency: int) -> dict[str, Any]:
    return {"sweep": {"name": "bench", "scenario": "kestrel", "arms": arms, "repeats": repeats,
                      "concurrency": concurrency, "seed": 1},
            "models": models}


def _run(db: Path, data: dict[str, Any], latency_scale: float) -> tuple[Any, float, float]:
    from foldscope.engine.launch import prepare_sweep
    from foldscope.engine.runner import SweepRunner

    prepared = prepare_sweep(db, data, "bench", fresh=True)
    runner = SweepRunner(db, prepared.sweep_id, latency_scale=latency_scale)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    asyncio.run(runner.run())
    return runner.totals, time.process_time() - cpu0, time.perf_counter() - wall0


def measure_cpu(rows_per_model_arm: int) -> dict[str, float]:
    """Zero-latency sweep: harness CPU per fold and folds per second."""
    from foldscope.engine.loader import load_scenario

    import foldscope.engine.sim.transport  # noqa: F401 - one-off import cost, not per fold

    load_scenario("kestrel")  # generation is a one-off cost, not per fold
    with tempfile.TemporaryDirectory() as tmp:
        data = _definition(["j", "q", "m"], rows_per_model_arm,
                           [{"id": m} for m in MODELS], concurrency=8)
        totals, cpu, wall = _run(Path(tmp) / "cpu.sqlite", data, 0.0)
    return {"folds": totals.folds, "cpu_ms_per_fold": 1000 * cpu / totals.folds,
            "folds_per_s": totals.folds / wall}


def measure_latency(concurrency: int, latency_s: float, rows: int) -> dict[str, float]:
    """Sweep with fixed simulated latency: how close calls/s gets to concurrency ÷ latency."""
    with tempfile.TemporaryDirectory() as tmp:
        model = {"id": "sim/faithful", "faults": {"latency_s": latency_s, "latency_jitter": 0.0}}
        data = _definition(["j", "q", "m", "o"], max(1, rows // 4), [model], concurrency)
        totals, _, wall = _run(Path(tmp) / "lat.sqlite", data, 1.0)
    calls = totals.folds + totals.rows_done  # every fold plus one recall turn per row
    ideal = concurrency / latency_s
    return {"calls": calls, "wall_s": wall, "latency_efficiency": (calls / wall) / ideal}


ALL_ARMS = ["f", "n", "j", "p", "q", "k", "o", "m", "t", "u", "l", "g"]


def measure_few_sequences(concurrency: int, latency_s: float) -> dict[str, float]:
    """Few model x repeat sequences, many arms: does concurrency get spent across arms?"""
    from foldscope.engine.loader import load_scenario

    load_scenario("kestrel")  # generation is a one-off cost, not the run's
    with tempfile.TemporaryDirectory() as tmp:
        model = {"id": "sim/faithful", "faults": {"latency_s": latency_s, "latency_jitter": 0.0}}
        data = _definition(ALL_ARMS, 2, [model], concurrency)
        totals, _, wall = _run(Path(tmp) / "few.sqlite", data, 1.0)
    calls = totals.folds + totals.rows_done
    in_flight = calls * latency_s / wall
    return {"calls": calls, "wall_s": wall, "mean_in_flight": in_flight,
            "latency_efficiency_few_sequences": in_flight / concurrency}


def measure_memory(rows: int) -> dict[str, float]:
    """A 1,000-row sweep at full speed: peak RSS and database bytes per fold."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "mem.sqlite"
        arms = ["f", "n", "j", "p", "q", "k", "o", "m", "t", "u"]  # 10 arms x 2 models x 50
        per_cell = max(1, rows // (len(arms) * len(MODELS)))
        data = _definition(arms, per_cell, [{"id": m} for m in MODELS], concurrency=16)
        totals, _, wall = _run(db, data, 0.0)
        size = sum(p.stat().st_size for p in Path(tmp).iterdir() if p.name.startswith("mem.sqlite"))
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"rows": totals.rows_done, "folds": totals.folds, "wall_s": wall,
            "peak_rss_mb": peak_kb / 1024, "db_bytes_per_fold": size / totals.folds}


def _child(kind: str, args: list[str]) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-m", "foldscope.bench", "--child", kind, *args],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Run every measurement, print a table and write bench-results.json."""
    p = argparse.ArgumentParser(prog="python -m foldscope.bench", description=__doc__.splitlines()[0])
    p.add_argument("--cpu-repeats", type=int, default=10, help="rows per model × arm for the CPU run")
    p.add_argument("--latency-rows", type=int, default=256,
                   help="rows in the latency run (4 arms, so rows/4 model x repeat sequences)")
    p.add_argument("--memory-rows", type=int, default=1000, help="rows in the memory run")
    p.add_argument("--out", default="bench-results.json", help="where to write the figures")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args, rest = p.parse_known_args(argv)
    if args.child:
        fn = {"cpu": lambda: measure_cpu(int(rest[0])),
              "latency": lambda: measure_latency(64, 1.0, int(rest[0])),
              "few": lambda: measure_few_sequences(24, 1.0),
              "memory": lambda: measure_memory(int(rest[0]))}[args.child]
        print(json.dumps(fn()))
        return 0
    print("foldscope bench · kestrel · in-process simulated models", file=sys.stderr)
    cpu = _child("cpu", [str(args.cpu_repeats)])
    print(f"  CPU per fold          {cpu['cpu_ms_per_fold']:8.2f} ms   (target ≤ 2 ms; "
          f"{cpu['folds']} folds)")
    print(f"  folds per second      {cpu['folds_per_s']:8.1f}      (zero simulated latency)")
    lat = _child("latency", [str(args.latency_rows)])
    print(f"  latency efficiency    {lat['latency_efficiency']:8.3f}      (target ≥ 0.95; "
          f"{lat['calls']} calls, 1 s latency, concurrency 64, {lat['wall_s']:.1f} s)")
    few = _child("few", [])
    print(f"  few-sequence efficiency {few['latency_efficiency_few_sequences']:6.3f}      "
          f"(target ≥ 0.9; 1 model × 2 repeats × 12 arms, concurrency 24, "
          f"{few['mean_in_flight']:.1f} calls in flight on average, {few['wall_s']:.1f} s)")
    mem = _child("memory", [str(args.memory_rows)])
    print(f"  peak RSS              {mem['peak_rss_mb']:8.1f} MB   (target ≤ 200 MB; "
          f"{mem['rows']} rows, {mem['folds']} folds, {mem['wall_s']:.0f} s)")
    print(f"  database per fold     {mem['db_bytes_per_fold']:8.0f} bytes")
    results = {"cpu_ms_per_fold": round(cpu["cpu_ms_per_fold"], 3),
               "folds_per_s": round(cpu["folds_per_s"], 1),
               "latency_efficiency": round(lat["latency_efficiency"], 4),
               "latency_efficiency_few_sequences": round(
                   few["latency_efficiency_few_sequences"], 4),
               "peak_rss_mb": round(mem["peak_rss_mb"], 1),
               "db_bytes_per_fold": round(mem["db_bytes_per_fold"], 1),
               "detail": {"cpu": cpu, "latency": lat, "few_sequences": few, "memory": mem,
                          "python": sys.version.split()[0], "cpus": os.cpu_count()}}
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
