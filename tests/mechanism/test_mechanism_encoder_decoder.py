"""The lens, ablation and patching on the 2017 shape (post-LN encoder-decoder): the decoder's stream, with the
source read through cross-attention; cross-attention heads are ablated like any other. Each number is checked
another way: the lens's last row is the model's output, a zero-ablated head is its W_O columns zeroed, a token
change is restored in full where it happens."""

from __future__ import annotations

import copy

import pytest
import torch

from tui_lab import build_model
from tui_lab.data.byte_codec import ByteCodec
from tui_lab.mechanism import readouts
from tui_lab.mechanism.ablation import head_ablation, next_token_loss
from tui_lab.mechanism.attribution import head_logit_attribution
from tui_lab.mechanism.lens import logit_lens
from tui_lab.mechanism.patching import patch_residual
from tui_lab.presets import load_preset

SRC, TGT = [3, 9, 14, 22, 5], [1, 7, 30, 12, 40, 2]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    config = load_preset("transformer-2017-toy").replace(encoder_layers=1, d_model=32, d_ff=64, dropout=0.0)
    return build_model(config).eval()


def test_lens_reads_the_decoder_stream_and_ends_at_the_model_output(model):
    table = logit_lens(model, ByteCodec(64), TGT, src=SRC)
    assert table.points == ["decoder.0.hook_resid_pre", "decoder.1.hook_resid_pre", "decoder.1.hook_resid_post"]
    probs = torch.softmax(model(torch.tensor([SRC]), torch.tensor([TGT]))[0], -1)  # (T, V)
    for t in range(len(TGT)):
        assert table.top[-1][t][0]["id"] == int(probs[t].argmax())
        assert table.top[-1][t][0]["prob"] == pytest.approx(float(probs[t].max()), abs=1e-5)


def test_ablation_covers_encoder_self_and_cross_heads_and_a_zeroed_head_is_its_w_o_columns_zeroed(model):
    src, tgt = torch.tensor([SRC]), torch.tensor([TGT])
    table = head_ablation(model, tgt, "zero", src=src)
    assert table.rows == ["enc L0", "dec L0 self", "dec L0 cross", "dec L1 self", "dec L1 cross"]
    d = model.config.d_model // model.config.heads
    for row, (block, attn) in [(2, (model.decoder[0], "cross")), (3, (model.decoder[1], "attn"))]:
        head = 1
        twin = copy.deepcopy(model)
        out = getattr(twin.decoder[list(model.decoder).index(block)], attn).out
        with torch.no_grad():
            out.weight[:, head * d:(head + 1) * d] = 0.0
        expected = next_token_loss(twin(src, tgt), tgt) - table.clean
        assert table.values[row][head] == pytest.approx(expected, abs=1e-5)
    assert all(abs(v) > 1e-6 for v in table.values[2])  # every cross head moves the loss


def test_patching_the_decoder_stream_restores_a_changed_target_token_where_it_changed(model):
    corrupt_tgt = [*TGT[:3], 50, *TGT[4:]]
    src = torch.tensor(SRC)
    table = patch_residual(model, torch.tensor(TGT), torch.tensor(corrupt_tgt), 10, 11, clean_src=src, corrupt_src=src)
    assert table.points[0] == "decoder.0.hook_resid_pre"
    assert table.values[0][3] == pytest.approx(1.0, abs=1e-5)
    assert table.values[0][:3] == pytest.approx([0.0] * 3, abs=1e-5)
    # another source, the same target: the decoder's layer-0 input is the same in both runs, so nothing there
    # restores anything; the source only reaches the stream through cross-attention
    other = patch_residual(model, torch.tensor(TGT), torch.tensor(TGT), 10, 11, clean_src=src,
                           corrupt_src=torch.tensor([40, 41, 42]))
    assert other.values[0] == pytest.approx([0.0] * len(TGT), abs=1e-5)


def test_the_app_readouts_take_the_source_and_attribution_refuses_in_one_line(model):
    table = readouts.ablation_of(model, TGT, "mean", src=SRC)
    assert len(table.values) == 5
    lens = readouts.lens_of(model, ByteCodec(64), TGT, src=SRC)
    assert len(lens.points) == 3
    with pytest.raises(ValueError, match=r"^attribution: covers decoder-only models; for an encoder-decoder") as err:
        head_logit_attribution(model, torch.tensor(TGT), 1, 2)
    assert "\n" not in str(err.value)
    copier = build_model(model.config.replace(copy=True))
    with pytest.raises(ValueError, match="copy distribution"):
        head_ablation(copier, torch.tensor([TGT]), src=torch.tensor([SRC]))
