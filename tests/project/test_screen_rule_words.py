"""The screen rules' reading of words (tests/support/screen_rules.py): a word is hidden only when no part of the
screen shows it; a path wider than its pane folds over lines and is seen; a run folded where its line ends in the
fold mark is seen; a line's columns are its cells (a wide character fills two, a combining mark none)."""

from screen_rules import FOLD, columns, cut_numbers, folded_words, hidden_words


def test_a_path_wider_than_the_pane_folded_over_lines_is_seen():
    shown = ["saved to          ", "/tmp/a/b/test_cra", "wl_0/runs/run-2 (o"]
    assert hidden_words(shown, "saved to /tmp/a/b/test_crawl_0/runs/run-2 (o") == []


def test_a_word_cut_off_with_no_mark_is_hidden():
    assert hidden_words(["step 12/400  loss"], "step 12/400  loss 2.31") == ["2.31"]
    assert hidden_words(["step 12/400  loss…"], "step 12/400  loss 2.31") == []  # the mark says there is more


def test_text_with_no_space_wider_than_the_widget_folds_unsplit():
    """A random model's sample ("uNFfoeEstJ.tWsy6oNoWT", no space) can only fold where the widget ends."""
    shown = ["uNFfoeEstJ.tWsy6o", "NoWT             "]
    assert folded_words(shown, "uNFfoeEstJ.tWsy6oNoWT") == []


def test_a_word_folded_where_a_space_could_have_broken_is_split():
    assert folded_words(["the encoder-de", "coder stack         "], "the encoder-decoder stack") != []


def test_a_newline_the_text_holds_is_no_split():
    """A random byte model samples newlines: "s" ending a line and "e" starting the next are not one word when the
    text breaks there (the long tier's HF 160x48 walk read 'se' as split, the text holding a 'se' elsewhere)."""
    text = "B\ufffd\ufffds\ne\ufffd{U\ufffdx 9\ufffdse"
    assert folded_words(["B\ufffd\ufffds      ", "e\ufffd{U\ufffdx 9\ufffdse"], text) == []
    assert folded_words(["B\ufffd\ufffds      ", "e\ufffd{U\ufffdx 9\ufffdse"], text.replace("\n", "")) != []


def test_a_wrap_at_a_space_is_no_split_when_the_join_is_a_word_elsewhere():
    """A barely trained char model's greedy text: "t" ends a line at a space and "the" starts the next; "tthe" is
    a word further on, yet this break is a wrap (the long tier's English 100x30 walk read 'tthe' as split)."""
    text = "t t t the ttthe tt t the tthe the t t t tthe tt"
    shown = ["t t t the ttthe tt t  ", "the tthe the t t t    ", "tthe tt               "]
    assert folded_words(shown, text) == []
    assert folded_words(["t t t the ttthe tt t", "the tthe"], text.replace("t the tthe", "tthe tthe")) != []


def test_a_run_folded_with_the_mark_is_seen_and_one_folded_without_it_is_not():
    text = "the 2194892411 x0a9 done"
    assert hidden_words([f"the 21948{FOLD}", "92411 x0a9 done"], text) == []
    assert hidden_words(["the 21948", "92411 x0a9 done"], text) == ["2194892411"]


def test_a_line_is_read_by_its_cells():
    line = "│a\u0301日b 12│x9│"  # a mark on a, a wide character: 12 sits in columns 6-7, the border at 8
    assert columns(line, 1, 8) == "a\u0301日b 12"
    assert columns(line, 9, 11) == "x9"
    assert cut_numbers([line], 12) == [f"line 0: digits touch the pane's edge at column 7: {line!r}"]
    assert cut_numbers(["│ab 12 │"], 7) == []


def test_a_cell_whole_beside_the_mark_is_not_a_hidden_cells_piece():
    """Experiments' tokens table scrolled a column: "2" after `‹` is the "shuffled to" cell, whole; the hidden
    0.1792 (right of `›`) is hidden whole, not shown in part (the long tier's HF 80x24 walk read it cut)."""
    from screen_rules import _part_shown

    line = " like    ‹2         2.4e-07    1.775            ›"
    cells = ["like", "1", "2", "2.4e-07", "1.775", "0.1792"]
    assert not _part_shown("0.1792", line, cells)
    assert _part_shown("0.2326", " I  ‹3   1.2e-07   0.23›", ["I", "0", "3", "1.2e-07", "0.2326"])
