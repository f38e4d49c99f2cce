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
