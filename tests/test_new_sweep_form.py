"""The new-sweep form: fields validated as `foldscope run` validates flags, errors inline, and a
valid form plans the sweep, opens it and runs it here."""

import pytest
from conftest import definition, run_sweep, wait_group, wait_until
from textual.widgets import Button, Input, Select, Static

from foldscope.cli.run_cmd import definition_from_args, register
from foldscope.engine.launch import SweepFields, definition_from_fields
from foldscope.engine.store import Store
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.screens.new_sweep import NewSweepScreen
from foldscope.ui.screens.sweep import SweepScreen


def test_the_form_and_the_cli_merge_a_definition_alike(tmp_path):
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["run", "--scenario", "smoke", "--models", "sim/faithful",
                              "--arms", "j,q", "--repeats", "3", "--concurrency", "2"])
    fields = SweepFields(scenario="smoke", models="sim/faithful", arms="j,q", repeats=3,
                         concurrency=2)
    assert definition_from_fields(fields) == definition_from_args(args)


async def start(pilot, form):
    """Press Start once the form takes it (it is disabled while a plan is being made)."""
    button = form.query_one("#start", Button)
    await wait_until(pilot, lambda: not button.disabled, "the Start button")
    # Press the button itself: the inline error above it changes height, so a click at the
    # button's last drawn position can land beside it while the layout settles on a busy machine.
    button.press()
    await pilot.pause()
    await wait_group(pilot.app, "new-sweep")  # the plan is made in a thread
    await pilot.pause()


@pytest.fixture
def one_sweep(tmp_path):
    db = tmp_path / "form.sqlite"
    return db, run_sweep(db, definition(models=("sim/faithful",), arms=("j",)))


async def test_the_form_shows_errors_inline_then_starts_a_sweep(one_sweep):
    db, first = one_sweep
    app = FoldscopeApp(str(db), sweep_id=first)
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewSweepScreen), "the form")
        form = app.screen
        error = form.query_one("#form-error", Static)

        form.query_one("#repeats", Input).value = "two"
        await start(pilot, form)
        await wait_until(pilot, lambda: "repeats: must be a whole number" in str(error.content),
                         "the inline count error")

        form.query_one("#repeats", Input).value = "1"
        form.query_one("#arms", Input).value = "j,zz"  # an unknown arm: build_config's rule
        await start(pilot, form)
        # The plan is made in a thread: allow it many turns on a loaded machine.
        await wait_until(pilot, lambda: "zz" in str(error.content), "the inline arm error",
                         attempts=5000)
        assert isinstance(app.screen, NewSweepScreen)

        form.query_one("#arms", Input).value = "j,q"
        form.query_one("#models", Input).value = "sim/faithful"
        form.query_one("#scenario", Select).value = "smoke"
        await start(pilot, form)
        await wait_until(pilot, lambda: isinstance(app.screen, SweepScreen)
                         and app.screen.sweep_id != first, "the new sweep's screen",
                         attempts=5000)
        new = app.screen.sweep_id
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: app.sweep_status == "done", "the new sweep to run")
    with Store(db, readonly=True) as store:
        sweep = store.sweep(new)
        assert sweep.status == "done" and len(store.rows(new)) == 2
        assert sweep.config["sweep"]["arms"] == ["j", "q"]
