"""Theme files: the shipped ones load, a bad one is a one-line error, variables default."""

from foldscope.ui.theme import FACT_VARIABLES, discover_themes


def test_shipped_theme_files_load(monkeypatch):
    monkeypatch.delenv("FOLDSCOPE_THEMES", raising=False)
    themes, errors = discover_themes()
    assert errors == []
    names = {t.name for t in themes}
    assert {"foldscope-light", "foldscope-high-contrast"} <= names
    for theme in themes:
        assert set(FACT_VARIABLES) <= set(theme.variables)


def test_bad_theme_file_is_reported_not_raised(tmp_path):
    (tmp_path / "bad.toml").write_text('name = "x"\nprimary = "#fff"\nsparkle = true\n')
    (tmp_path / "broken.toml").write_text("name = ")
    (tmp_path / "ok.toml").write_text('name = "ok"\nprimary = "#123456"\n[variables]\nfact-present = "#00ff00"\n')
    themes, errors = discover_themes(tmp_path)
    assert [t.name for t in themes] == ["ok"]
    assert themes[0].variables["fact-present"] == "#00ff00"
    assert themes[0].variables["fact-missing"] == FACT_VARIABLES["fact-missing"]
    assert len(errors) == 2 and all("\n" not in e for e in errors)
    assert any("sparkle" in e for e in errors)


def test_user_theme_folders_are_searched_first(tmp_path, monkeypatch):
    (tmp_path / "foldscope-light.toml").write_text('name = "foldscope-light"\nprimary = "#abcdef"\n')
    (tmp_path / "mine.toml").write_text('name = "mine"\nprimary = "#123456"\n')
    monkeypatch.setenv("FOLDSCOPE_THEMES", str(tmp_path))
    themes, errors = discover_themes()
    by_name = {t.name: t for t in themes}
    assert errors == []
    assert {"mine", "foldscope-light", "foldscope-high-contrast"} <= set(by_name)
    assert by_name["foldscope-light"].primary == "#abcdef"


async def test_scrollbars_take_each_themes_colours_not_black(tmp_path):
    """Textual's default track is the background darkened (black in a dark theme); every theme
    gives its track its panel colour and a thumb that stands out of it, drawn so."""
    from textual.app import App
    from textual.color import Color

    from foldscope.ui.theme import FOLDSCOPE_DARK
    from foldscope.ui.widgets.carrier_view import CarrierView

    themes, errors = discover_themes()
    assert not errors

    class One(App[None]):
        def compose(self):
            yield CarrierView()

    for theme in [FOLDSCOPE_DARK, *themes]:
        app = One()
        app.register_theme(theme)
        app.theme = theme.name
        async with app.run_test(size=(40, 8)) as pilot:
            view = app.query_one(CarrierView)
            view.show("\n".join(f"line {i} " * 8 for i in range(60)))
            await pilot.pause()
            panel = Color.parse(theme.panel)
            assert view.styles.scrollbar_background == panel, theme.name
            thumb = view.styles.scrollbar_color
            assert abs(thumb.brightness - panel.brightness) > 0.1, theme.name
            # What is drawn: the bar's cells are the track's colour and the thumb's.
            bar = view.vertical_scrollbar.region
            assert bar.width and bar.height, "the carrier scrolls"
            strips = app.screen._compositor.render_strips()
            drawn = set()
            for y in range(bar.y, bar.bottom):
                x = 0
                for seg in strips[y]:
                    for _ in seg.text:
                        if bar.x <= x < bar.right:  # the colour a cell shows as its ground
                            style = seg.style
                            ground = style.color if style.reverse else style.bgcolor
                            drawn.add(ground.triplet.hex.lower())
                        x += 1
            assert drawn == {panel.hex.lower(), thumb.hex.lower()}, (theme.name, drawn)
