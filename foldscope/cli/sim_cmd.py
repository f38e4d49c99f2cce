"""``foldscope sim``: list the simulated models or serve them over HTTP on loopback."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sim`` command with its ``serve`` and ``list`` subcommands."""
    p = subparsers.add_parser("sim", help="simulated models: list them or serve them over HTTP")
    sub = p.add_subparsers(dest="sim_command", metavar="SUBCOMMAND", required=True,
                           parser_class=type(p))
    serve = sub.add_parser(
        "serve", help="serve the simulated models on 127.0.0.1 (OpenAI Chat Completions dialect)")
    serve.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 = any)")
    serve.add_argument("--host", default="127.0.0.1", help="loopback address only")
    serve.add_argument("--config", metavar="FILE",
                       help="TOML model file; its sim entries' [models.faults] are injected")
    serve.add_argument("--latency-scale", type=float, default=1.0, metavar="X",
                       help="multiplier on simulated latency (0 = full speed)")
    serve.add_argument("--verbose", action="store_true", help="log each request to stderr")
    serve.set_defaults(handler=run_serve)
    lst = sub.add_parser("list", help="list the built-in simulated models")
    lst.set_defaults(handler=run_list)


def run_list(args: argparse.Namespace) -> int:
    """Print the built-in sims, one per line."""
    from foldscope.engine.sim import catalog

    for name, what in catalog.TEMPERAMENTS.items():
        print(f"{catalog.SIM_PREFIX}{name}: {what}")
    return 0


def run_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from foldscope.engine.models import load_models_toml
    from foldscope.engine.sim.endpoint import SimEndpoint
    from foldscope.engine.sim.server import SimHTTPServer

    faults = {}
    if args.config:
        for cfg in load_models_toml(args.config).values():
            if cfg.provider == "sim" and cfg.faults is not None:
                faults[cfg.wire_model] = cfg.faults
    server = SimHTTPServer(args.host, args.port, endpoint=SimEndpoint(faults),
                           latency_scale=args.latency_scale, verbose=args.verbose)
    print(f"foldscope sim: serving {len(server.endpoint.model_names())} simulated models at "
          f"{server.base_url} (ctrl-c to stop)", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
