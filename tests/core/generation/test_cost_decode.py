"""Decode FLOPs per token (seed 003): a hand count on a tiny config, torch's own count of the matmuls, the
cached L*d part linear in L, the uncached total ~L^2, and the steps of a run as the speed comparison times them."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from tui_lab import ModelConfig, build_model
from tui_lab.analysis.cost import decode_flops_per_token, decode_step_flops, encoder_flops, flops_per_token


def _matrix_vector(*shapes, out_shape=None, **kwargs) -> int:
    """FLOPs of mv(matrix, vector) and addmv(bias, matrix, vector): the matrix is the shape before the last."""
    rows, columns = shapes[-2]
    return 2 * rows * columns


# torch's counter has no formula for a matrix-vector product, which a one-row cached step uses (decode_step.py)
MATRIX_VECTOR = {torch.ops.aten.mv: _matrix_vector, torch.ops.aten.addmv: _matrix_vector}

# E=4, one layer, d_ff 8, vocab 10, biases: attention 4*(16+4)=80, FFN (32+8)+(32+4)=76, head 10*4=40.
TINY = ModelConfig(d_model=4, heads=2, d_ff=8, vocab=10, max_len=64, decoder_layers=1)


def test_hand_count_of_a_tiny_config():
    weights = 2 * (80 + 76 + 40)  # a multiply-add is 2 FLOPs: 392 per token through every weight
    assert decode_flops_per_token(TINY, 3, cached=True) == (weights, 4 * 3 * 4)  # q.K and w.V over 3 keys, E=4
    # uncached at L=3: three tokens through the weights, queries seeing 1, 2 and 3 keys
    assert decode_flops_per_token(TINY, 3, cached=False) == (3 * weights, 4 * 4 * (1 + 2 + 3))


def test_cached_total_is_the_forward_flops_per_token():
    config = ModelConfig(d_model=64, heads=4, d_ff=256, vocab=300, decoder_layers=3, max_len=512)
    for context in (1, 17, 500):
        assert sum(decode_flops_per_token(config, context, cached=True)) == flops_per_token(config, context)


def test_cached_ld_part_is_linear_in_l_and_uncached_total_grows_as_l_squared():
    config = ModelConfig(d_model=64, heads=4, d_ff=256, vocab=300, decoder_layers=3, max_len=4096)
    cached = [decode_flops_per_token(config, n, cached=True) for n in (100, 200, 400)]
    assert {d2 for d2, _ in cached} == {cached[0][0]}  # the d^2 part does not move with L
    assert [ld for _, ld in cached] == [cached[0][1] * k for k in (1, 2, 4)]  # exactly linear: 4*E per layer
    assert cached[1][1] - cached[0][1] == 3 * 4 * 100 * 64
    uncached = [sum(decode_flops_per_token(config, n, cached=False)) for n in (1000, 2000, 4000)]
    # a token's cost grows with L, so a run's total is ~L^2: doubling L at least doubles a step, and the
    # L*d part (L^2 per step) makes it more than double
    assert 2 < uncached[1] / uncached[0] < 4 and 2 < uncached[2] / uncached[1] < 4
    runs = [sum(map(sum, decode_step_flops(config, 1, n, cached=False))) for n in (500, 1000)]
    assert 4 <= runs[1] / runs[0] < 8  # total over a run: ~L^2 (and L^3 from the small L*d part)


@pytest.mark.parametrize("family", ["decoder-only", "encoder-decoder"])
def test_d2_part_matches_torch_flop_counter(family, monkeypatch):
    """torch counts the matmuls of a real decode step on the module path (the textbook order of the sums); without
    biases that is exactly our d^2 part. The flat step (model/decode_step.py) does no more: an encoder-decoder's row
    there has the source folded into its cross-attention, fewer FLOPs per step, made once."""
    layers = {"encoder_layers": 1, "decoder_layers": 2} if family == "encoder-decoder" else {"decoder_layers": 2}
    config = ModelConfig(family=family, d_model=16, heads=2, d_ff=32, vocab=20, max_len=64, bias=False, dropout=0.0,
                         positions="sinusoidal", **layers)
    model = build_model(config).eval()
    source = 5 if family == "encoder-decoder" else 0
    counts = {}
    for path in ("1", "0"):  # TUI_LAB_MODULE_STEP: the module path, then the flat step
        monkeypatch.setenv("TUI_LAB_MODULE_STEP", path)
        with torch.inference_mode():
            memory = model.encode(torch.randint(20, (1, source))) if source else None
            cache = model.new_cache(1, 32)
            model.decode(torch.randint(20, (1, 6)), memory, cache=cache)
            model.decode(torch.randint(20, (1, 1)), cache=cache)  # 7 tokens cached (a flat step's plan made)
            with FlopCounterMode(display=False, custom_mapping=MATRIX_VECTOR) as one_new:
                model.decode(torch.randint(20, (1, 1)), cache=cache)  # the 8th is new
            counts[path] = one_new.get_total_flops()
            with FlopCounterMode(display=False, custom_mapping=MATRIX_VECTOR) as recompute:
                model.decode(torch.randint(20, (1, 8)), memory)
    assert counts["1"] == decode_flops_per_token(config, 8, True, source)[0]
    assert counts["0"] <= counts["1"] if source else counts["0"] == counts["1"]
    assert recompute.get_total_flops() == decode_flops_per_token(config, 8, False, source)[0]


def test_steps_of_a_run_prefill_then_cached_and_slide_past_max_len():
    config = ModelConfig(d_model=8, heads=2, d_ff=16, vocab=10, max_len=6, decoder_layers=1)
    cached = decode_step_flops(config, prompt_len=4, new_tokens=4, cached=True)
    uncached = decode_step_flops(config, prompt_len=4, new_tokens=4, cached=False)
    assert cached[0] == uncached[0] == decode_flops_per_token(config, 4, False)  # the prefill
    assert cached[1:3] == [decode_flops_per_token(config, n, True) for n in (5, 6)]
    assert uncached[1:3] == [decode_flops_per_token(config, n, False) for n in (5, 6)]
    assert cached[3] == uncached[3] == decode_flops_per_token(config, 6, False)  # context 7 > max_len 6: window


def test_encoder_decoder_steps_count_the_source_and_the_encoder_once():
    config = ModelConfig(family="encoder-decoder", encoder_layers=1, decoder_layers=1, d_model=8, heads=2, d_ff=16,
                         vocab=10, positions="sinusoidal")
    steps = decode_step_flops(config, prompt_len=5, new_tokens=3, cached=True)
    d2, ld = decode_flops_per_token(config, 1, False, source=5)
    assert steps[0] == (d2 + encoder_flops(config, 5), ld)
    assert steps[1] == decode_flops_per_token(config, 2, True, source=5)
    assert steps[1][1] == 4 * 2 * 8 + 4 * 5 * 8  # self-attention over 2 keys, cross-attention over 5


def test_bad_context_is_a_value_error():
    with pytest.raises(ValueError, match="context"):
        decode_flops_per_token(TINY, 0, cached=True)
