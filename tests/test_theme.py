"""Theme files: the shipped ones load, a bad one is a one-line error, variables default."""

from foldscope.ui.theme import FACT_VARIABLES, discover_themes, themes_dir


def test_shipped_theme_files_load():
    themes, errors = discover_themes(themes_dir())
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
