"""The braille survival chart's rasteriser."""

from foldscope.ui.widgets.survival_chart import Series, braille_canvas


def test_a_flat_line_at_the_top_and_a_falling_one():
    grid = braille_canvas([Series("a", (1.0, 1.0, 1.0)), Series("b", (1.0, 0.5, 0.0))], 10, 4)
    assert len(grid) == 4 and all(len(row) == 10 for row in grid)
    # Series a runs along the top row across the whole width.
    assert all(ch != " " for ch, _ in grid[0])
    # Series b ends in the bottom-right cell; the later series owns shared cells.
    assert grid[-1][-1][0] != " " and grid[-1][-1][1] == 1
    assert grid[0][0][1] == 1
    assert all(owner is None for ch, owner in grid[-1][:4])


def test_gaps_and_empty_input():
    grid = braille_canvas([Series("a", (None, 0.0, None))], 6, 2)
    marked = [(r, c) for r, row in enumerate(grid) for c, (ch, _) in enumerate(row) if ch != " "]
    assert marked == [(1, 2)] or len(marked) == 1  # one lone point, no line to nowhere
    assert braille_canvas([], 3, 1) == [[(" ", None)] * 3]


def _arm_colours(theme):
    return [theme.variables[f"arm-{i}"] for i in range(12)]


def test_every_theme_separates_the_twelve_arms():
    import itertools
    import math

    from foldscope.core.arms import ARMS
    from foldscope.ui.theme import FOLDSCOPE_DARK, discover_themes
    from foldscope.ui.widgets.survival_chart import SERIES_MARKS, arm_slot

    themes, errors = discover_themes()
    assert not errors and {t.name for t in themes} >= {"foldscope-colourblind",
                                                      "foldscope-high-contrast"}
    assert sorted(arm_slot(a) for a in ARMS) == list(range(12))
    assert len(set(SERIES_MARKS)) == 12  # a mark per arm, whatever the colours
    for theme in [FOLDSCOPE_DARK, *themes]:
        rgb = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in _arm_colours(theme)]
        closest = min(math.dist(a, b) for a, b in itertools.combinations(rgb, 2))
        assert closest >= 40, theme.name


async def test_the_legend_shows_each_series_mark_in_its_arms_colour():
    from textual.app import App, ComposeResult

    from foldscope.ui.theme import FACT_VARIABLES
    from foldscope.ui.widgets.survival_chart import SERIES_MARKS, SurvivalChart, arm_slot

    class Host(App[None]):
        def get_theme_variable_defaults(self):
            return dict(FACT_VARIABLES)

        def compose(self) -> ComposeResult:
            yield SurvivalChart()

    app = Host()
    async with app.run_test(size=(60, 30)) as pilot:
        chart = app.query_one(SurvivalChart)
        chart.show([Series("arm j", (1.0, 0.2), arm_slot("j")),
                    Series("arm q", (0.6, 0.9), arm_slot("q"))])
        await pilot.pause()
        lines = ["".join(s.text for s in chart.render_line(y)) for y in range(30)]
        legend_j = next(y for y, line in enumerate(lines) if "arm j" in line)
        legend_q = next(y for y, line in enumerate(lines) if "arm q" in line)
        assert SERIES_MARKS[arm_slot("j")] in lines[legend_j]
        assert SERIES_MARKS[arm_slot("q")] in lines[legend_q]

        def colour(y, mark):
            return next(s.style.color for s in chart.render_line(y) if mark in s.text)

        assert colour(legend_j, SERIES_MARKS[arm_slot("j")]) != colour(
            legend_q, SERIES_MARKS[arm_slot("q")])
        plot = "".join(lines[:legend_j])
        assert SERIES_MARKS[arm_slot("j")] in plot and SERIES_MARKS[arm_slot("q")] in plot
