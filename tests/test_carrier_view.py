"""The carrier view: literal text (no markup, no escape codes reach the terminal), facts lit."""

from textual.app import App, ComposeResult

from foldscope.core.forensics import fact_spans
from foldscope.core.text import literal
from foldscope.ui.theme import FACT_VARIABLES, FOLDSCOPE_DARK, discover_themes
from foldscope.ui.widgets.carrier_view import CarrierView


class _Host(App[None]):
    """A bare app with foldscope's theme variables and themes, as the real app has them."""

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(FACT_VARIABLES)

    def on_mount(self) -> None:
        self.register_theme(FOLDSCOPE_DARK)
        for theme in discover_themes()[0]:
            self.register_theme(theme)
        self.theme = FOLDSCOPE_DARK.name

    def compose(self) -> ComposeResult:
        yield CarrierView()


class F:
    def __init__(self, label, value):
        self.label, self.value = label, value


def test_literal_maps_controls_one_for_one():
    assert literal("a\x1b[31mb\tc\x00") == "a␛[31mb c␀"
    assert len(literal("\x07\x9b")) == 2


async def test_hostile_carrier_is_shown_literally_with_facts_highlighted():
    carrier = "[bold]not bold[/bold] \x1b[31mred?\n- port: 62114\n- key: kid-7F3A9C2l"
    facts = [F("port", "62114"), F("key", "kid-7F3A9C21")]
    app = _Host()
    async with app.run_test(size=(80, 10)) as pilot:
        view = app.query_one(CarrierView)
        view.show(carrier, fact_spans(carrier, facts))
        await pilot.pause()
        assert view.plain_lines[0] == "[bold]not bold[/bold] ␛[31mred?"
        rendered = "".join(seg.text for seg in view.render_line(0))
        assert "\x1b" not in rendered and "[bold]not bold[/bold]" in rendered
        lit = [seg for seg in view.render_line(1) if seg.text == "62114"]
        assert lit and lit[0].style.underline and lit[0].style.bold
        mutated = [seg for seg in view.render_line(2) if seg.text == "kid-7F3A9C2l"]
        assert mutated and mutated[0].style.underline
        assert view.virtual_size.height == 3


async def test_long_lines_wrap_to_the_pane_and_the_toggle_unwraps_them():
    carrier = '{"summary": "' + "port 62114 " * 30 + '"}\nshort'
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(CarrierView)
        view.show(carrier, fact_spans(carrier, [F("port", "62114")]))
        await pilot.pause()
        width = view.scrollable_content_region.width
        assert view.wrap and view.virtual_size.height > 2 and view.virtual_size.width == width
        rows = ["".join(seg.text for seg in view.render_line(y)) for y in range(3)]
        assert all("\n" not in r and len(r) == width for r in rows)
        assert any(seg.text == "62114" and seg.style.underline for seg in view.render_line(0))
        assert view.plain_lines == carrier.split("\n")  # logical lines are unchanged
        view.action_toggle_wrap()
        await pilot.pause()
        assert view.virtual_size.height == 2 and view.virtual_size.width > width


async def test_fact_colours_follow_the_theme_when_drawn():
    carrier = "port 62114"
    app = _Host()
    async with app.run_test(size=(60, 8)) as pilot:
        view = app.query_one(CarrierView)
        view.show(carrier, fact_spans(carrier, [F("port", "62114")]))
        await pilot.pause()

        def colour():
            return next(seg.style.color for seg in view.render_line(0) if seg.text == "62114")

        before = colour()
        app.theme = "foldscope-colourblind"
        await pilot.pause()
        assert colour() != before


def _screen_lines(app) -> list[str]:
    """What the terminal shows, line by line (the compositor's strips, as sent)."""
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


async def _read_view(pilot, app, view) -> list[str]:
    """The display lines a person can read by scrolling the view, taken from the screen."""
    region = view.content_region  # inside the border, scrollbar gutter excluded below
    width = view.scrollable_content_region.width
    height = view.scrollable_content_region.height
    total = view.virtual_size.height
    wide = view.virtual_size.width
    lines: dict[int, str] = {}
    for top in range(0, max(1, total), max(1, height)):
        pieces: dict[int, list[str]] = {}
        for left in range(0, max(1, wide), max(1, width)):
            view.scroll_to(left, top, animate=False, immediate=True)
            await pilot.pause()
            screen = _screen_lines(app)
            y0, x0 = view.scroll_offset.y, view.scroll_offset.x
            for dy in range(height):
                row = screen[region.y + dy][region.x: region.x + width]
                pieces.setdefault(y0 + dy, []).append((x0, row))
        for y, parts in pieces.items():
            line = ""
            for x0, row in parts:
                line = line[:x0] + row
            lines[y] = line
    return [lines[y] for y in sorted(lines) if y < total]


LONG_VALUES = ("sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
               "e0e152f3a96c1fe92563d1ab",
               "https://artifacts.kestrel.example.org/releases/2026-07-14/build-"
               "4471/manifests/backup-cutoff.json?token=7F3A9C21&sig=ab12cd34ef56",
               "/opt/kestrel/state/backups/cutoff-2026-07-14T01:37:00Z.tar.zst")


async def test_every_character_of_a_long_value_is_on_screen_at_every_width():
    # Values a person checks verbatim: whatever the pane's width, wrapped or not, every
    # character can be read on screen (no line end under the scrollbar, none clipped).
    body = "\n".join(f"- value {i}: {v}" for i, v in enumerate(LONG_VALUES))
    carrier = ("## Facts\n" + "\n".join(f"- filler line {i} keeps the pane scrolling"
                                       for i in range(30)) + "\n" + body + "\n" + body
               .replace("- ", "  ") + "\n" + '{"summary": "' + " ".join(LONG_VALUES) + '"}')
    for width in (24, 31, 40, 47, 58, 66, 79, 93, 120):
        app = _Host()
        async with app.run_test(size=(width, 16)) as pilot:
            view = app.query_one(CarrierView)
            view.show(carrier)
            await pilot.pause()
            for wrap in (True, False):
                view.wrap = wrap
                await pilot.pause()
                shown = await _read_view(pilot, app, view)
                joined = "".join(line.rstrip() for line in shown).replace(" ", "")
                for value in LONG_VALUES:
                    assert value in joined, (width, wrap, value)
                if not wrap:
                    # Unwrapped, each logical line is one display line, whole after scrolling.
                    for logical in view.plain_lines:
                        assert any(line.rstrip() == logical.rstrip() for line in shown), (
                            width, logical)
