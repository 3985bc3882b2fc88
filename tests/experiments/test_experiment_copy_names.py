"""copy-names: the pointer-generator says held-out names that are not in the vocabulary; the plain model cannot."""

import pytest

from tui_lab.experiments import get, names


def test_the_copy_run_says_names_it_was_never_taught_and_the_plain_run_does_not():
    exp = get("copy-names")
    result = exp.run(exp.resolve(sets={"steps": "80", "eval_examples": "30", "examples": "3"}))
    s = result.scalars
    assert s["unseen_said_copy"] > 0.5 and s["unseen_said_no_copy"] == 0.0  # <unk> is all it can say
    assert s["exact_match_copy"] > s["exact_match_no_copy"]
    source, target, plain, copied = result.tables["examples"].rows[0]
    from tui_lab.data import load_task

    vocab = load_task("names").tokenizer.hf.get_vocab()
    unseen = [w for w in source.split() if w not in vocab]
    assert unseen and unseen[0] in target.split() and unseen[0] not in plain.split()  # held out: never a token
    assert [c.label for c in result.plots["loss"].curves] == ["without copy", "with copy"]


def test_it_is_registered_and_its_options_are_checked_in_one_line():
    assert "copy-names" in names()
    with pytest.raises(ValueError, match=r"^steps \(1\) must be 0 \(the task's default\) or at least 2$"):
        get("copy-names").resolve(sets={"steps": "1"})
    with pytest.raises(ValueError, match="examples must be a whole number, got 'few'"):
        get("copy-names").resolve(sets={"examples": "few"})
