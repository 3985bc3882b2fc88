"""post-ln-warmup: per-layer gradient norms at initialisation, and the four runs post/pre x warmup/none.

The toys use GPT-2's init (std 0.02, embeddings unscaled), not the Xavier init of Xiong et al. 2020, and their
profile differs from the paper's: post-LN's first block (whose norm sees the tiny embeddings) takes most of
the gradient and the others get about the same; pre-LN's gradient falls from the first block to the last.
The test pins that measured profile, so a change to the init or the norms shows here."""

import math

import pytest

from tui_lab.experiments import get
from tui_lab.experiments.post_ln_warmup import init_grad_norms, unigram_loss
from tui_lab.experiments.training import char_data
from tui_lab.presets import load_preset


def _config(position: str):
    return load_preset("gpt2-toy", layers=8, d_model=32, heads=2, d_ff=128, dropout=0.0, norm_position=position)


def test_init_gradient_profiles_of_post_and_pre_ln():
    post = init_grad_norms(_config("post"), char_data(), 4, 32, seed=0)
    pre = init_grad_norms(_config("pre"), char_data(), 4, 32, seed=0)
    assert len(post) == len(pre) == 8 and all(v > 0 for v in post + pre)
    assert post[0] > 5 * max(post[1:]) and max(post[1:]) < 1.5 * min(post[1:])  # flat after block 0
    assert pre[-1] < 0.7 * pre[0]


def test_a_tiny_run_trains_all_four():
    exp = get("post-ln-warmup")
    options = exp.resolve(sets={"steps": "4", "warmup": "2", "batch_size": "2", "seq_len": "16", "d_model": "16",
                                "heads": "2", "layers": "3"})
    result = exp.run(options)
    assert [c.label for c in result.plots["loss"].curves] == [
        "post-LN, warmup 2", "post-LN, no warmup", "pre-LN, warmup 2", "pre-LN, no warmup"]
    assert [len(c.ys) for c in result.plots["init_grads"].curves] == [3, 3]
    assert set(result.scalars) >= {"val_post_warmup", "val_pre_no_warmup", "post_grad_last_over_first", "post_gap",
                                   "pre_gap", "unigram_val_loss"}
    assert result.notes[0].startswith("post-LN without warmup")


def test_post_ln_needs_the_warmup_and_pre_ln_does_not():
    """The lesson at a size that runs in seconds (8 layers; measured: post gap 0.95, pre gap 0.19, seed 0)."""
    exp = get("post-ln-warmup")
    options = exp.resolve(sets={"layers": "8", "steps": "250", "warmup": "125", "lr": "8e-3", "batch_size": "8",
                                "seq_len": "32"})
    s = exp.run(options).scalars
    assert s["post_gap"] > 0.5 and s["pre_gap"] < 0.3  # the warmup is what post-LN needs, not pre-LN
    assert abs(s["val_post_no_warmup"] - s["unigram_val_loss"]) < 0.1  # stuck where no context is used
    assert s["val_pre_no_warmup"] < s["unigram_val_loss"] - 0.5  # pre-LN learns without it


def test_the_unigram_loss_is_the_entropy_of_a_uniform_stream():
    import torch

    from tui_lab.data.lm import LMData

    data = LMData(char_data().tokenizer, torch.arange(4).repeat(50), torch.arange(4).repeat(5))
    vocab = data.tokenizer.vocab_size  # add-one smoothing over every id: (50 + 1) / (200 + V) for each seen id
    assert unigram_loss(data) == pytest.approx(-math.log(51 / (200 + vocab)))


def test_a_warmup_as_long_as_the_run_is_refused():
    with pytest.raises(ValueError, match=r"warmup \(10\) must be below steps"):
        get("post-ln-warmup").resolve(sets={"steps": "10", "warmup": "10"})


def test_an_unknown_embedding_scale_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^embedding_scale \('half'\) must be one of: none, sqrt_d_model$"):
        get("post-ln-warmup").resolve(sets={"embedding_scale": "half"})
