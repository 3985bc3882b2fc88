"""Tour: every page shows its picture beside its words, read off the rendered screen; the live model stays."""

from __future__ import annotations

from app_support import app_for, screen_lines, wait_for, wait_ready
from app_tour_support import go_to, open_tour
from rich.color import Color
from screen_reader import find_columns, find_rows, read_svg, slot_colours
from textual.widgets import Input, TabbedContent

from tui_lab.app.examples import NUMBER, TOY_DE, numbers_pair
from tui_lab.app.views.tour.steps import STEPS
from tui_lab.app.widgets.grid_cells import palette

# A phrase each page's picture draws (captions, diagram rules, table cells), not its text.
PICTURE = ("RNN: 5 steps, one after another", "PE(pos, 2i)", "(most on the token before)",
           "padding: the batch of 4/3/1",
           "cross-attention · layer", "GPT-2 · pre-LN", "2017 base   GPT-2 small", "self-attention over the cache")


SIZES = ((80, 24), (160, 48))


def _page_reads(app, tour, i: int, step, size: tuple[int, int]) -> None:
    lines = screen_lines(app)
    text = "\n".join(lines)
    assert f"Step {i + 1} of {len(STEPS)}: {step.title}" in text, (size, text)
    assert PICTURE[i] in text, f"step {i + 1}: no picture at {size}"
    first_words = " ".join(step.text(tour.pictures).split()[:4])
    words_y, picture_y = line_of(lines, first_words), line_of(lines, PICTURE[i])
    if size[0] >= 120:  # side by side: the picture starts on the text's first line, right of it
        assert picture_y == words_y, (i, size, text)
        assert lines[words_y].index(PICTURE[i]) > lines[words_y].index(first_words)
    else:  # text above the picture
        assert picture_y > words_y, (i, size, text)
    if "GPT-2 small" in PICTURE[i]:
        assert "124,439,808" in text and "63,082,496" in text  # whole, never cut


def line_of(lines: list[str], phrase: str) -> int:
    return next(y for y, line in enumerate(lines) if phrase in line)


# One app for both sizes: each page is read at the size the screen is at, then resized to the other (the page is
# laid out again there, as a person's resize does), so each size is seen both as opened and as resized to.
async def test_every_page_draws_its_picture_and_the_live_model_stays():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZES[0]) as pilot:
        await wait_ready(pilot)
        live_model, generation = app.live.model, app.live.generation
        tour = await open_tour(pilot)
        for i, step in enumerate(STEPS):
            await go_to(pilot, tour, i)
            current = tuple(app.size)
            for size in sorted(SIZES, key=lambda size: size != current):
                if size != tuple(app.size):
                    await pilot.resize_terminal(*size)
                    await pilot.pause()
                _page_reads(app, tour, i, step, size)
        await pilot.press("n")  # past the last page stays on it
        assert tour.step == len(STEPS) - 1
        await pilot.press("p")
        assert tour.step == len(STEPS) - 2
        assert app.live.model is live_model and app.live.generation == generation
        assert not [n for n in app._notifications if n.severity == "error"]
        assert all(toy.model is not live_model for toy in tour.pictures.toys.values())


def palette_level(hex_colour: str | None) -> int:
    """The palette index nearest to a cell's background (the scale's order: higher = more weight)."""
    if hex_colour is None:
        return -1
    rgb = Color.parse(hex_colour).get_truecolor()

    def distance(i: int) -> int:
        return sum((a - b) ** 2 for a, b in zip(palette()[i].get_truecolor(), rgb, strict=True))

    return min(range(len(palette())), key=distance)


async def test_cross_attention_page_is_target_by_source_and_zwei_reads_two():
    size = (80, 24)
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=size) as pilot:
        tour = await open_tour(pilot)
        await go_to(pilot, tour, next(i for i, s in enumerate(STEPS) if s.title == "Cross-attention"))
        screen = read_svg(app.export_screenshot(), *size)
        source, target = numbers_pair()
        cols = find_columns(screen, source.split())
        assert cols is not None, screen.text()
        rows = find_rows(screen, [*target.split(), "<eos>"], cols.x0, cols.y + 1)
        assert -1 not in rows and len(rows) != len(source.split())  # 6 target rows x 4 source columns
        zwei = rows[target.split().index("zwei")]
        levels = [max(palette_level(c) for c in colours) for colours in slot_colours(screen, zwei, cols, 4)]
        assert levels.index(max(levels)) == source.split().index("two")
        assert "'zwei' puts 1.00 on 'two'" in STEPS[4].text(tour.pictures).replace("\n", " ")


async def test_g_opens_the_steps_full_view_without_touching_the_live_model():
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        tour = await open_tour(pilot)
        await go_to(pilot, tour, len(STEPS) - 1)
        await pilot.press("g")
        assert app.query_one("#views", TabbedContent).active == "speed"
        await pilot.press("f3")
        await pilot.press("p")
        await pilot.press("g")  # the counts table: the Architecture view's Compare tab
        assert app.query_one("#views", TabbedContent).active == "architecture"
        assert app.query_one("#arch-tabs", TabbedContent).active == "arch-compare"
        assert app.live.model is None and app.live.generation == 0


def test_the_cross_attention_number_is_held_out():
    from tui_lab.data.numbers import english_words, german_words
    from tui_lab.data.tasks import load_task

    task = load_task("numbers-de")
    assert numbers_pair() == (english_words(NUMBER), german_words(NUMBER))
    assert numbers_pair() in task.examples("val") and numbers_pair() not in task.examples("train")


async def test_the_attention_view_starts_the_shipped_2017_toy_on_the_held_out_number():
    app = app_for("--preset", TOY_DE)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f2")
        attention = app.view("attention")
        await wait_for(pilot, lambda: attention.captured_generation == app.live.generation)
        source, target = numbers_pair()
        assert attention.query_one("#att-src", Input).value == source
        assert attention.query_one("#att-tgt", Input).value == f"<bos> {target}"
