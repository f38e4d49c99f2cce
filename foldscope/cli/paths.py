"""Default database locations shared by the commands."""

DEFAULT_DB = "db/foldscope.sqlite"
"""Where `run` and `report` keep sweeps unless --db says otherwise."""

DEMO_DB = "db/demo.sqlite"
"""The demo's database, which the bare `foldscope` command opens."""
