"""The screen rules' reading of words (tests/support/screen_rules.py): a word is hidden only when no part of the
screen shows it; a path wider than its pane folds over lines and is seen."""

from screen_rules import folded_words, hidden_words


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
