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
