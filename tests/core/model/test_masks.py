import torch

from tui_lab.model.masks import causal_mask, combine, key_padding, padding_mask


def test_causal_mask_position_i_sees_zero_to_i():
    m = causal_mask(4)
    assert m.tolist() == [[True, False, False, False], [True, True, False, False],
                          [True, True, True, False], [True, True, True, True]]


def test_causal_mask_with_a_cache_is_aligned_to_the_end():
    assert causal_mask(2, 5).tolist() == [[True, True, True, True, False], [True] * 5]


def test_padding_mask_of_seed_002_lengths():
    assert padding_mask([4, 3, 1]).tolist() == [[True] * 4, [True, True, True, False], [True, False, False, False]]


def test_combined_mask_blocks_future_and_padding():
    both = combine(key_padding(padding_mask([4, 3, 1])), causal_mask(4))
    assert both.shape == (3, 1, 4, 4)
    assert both[1, 0, 3].tolist() == [True, True, True, False]
    assert both[2, 0, 2].tolist() == [True, False, False, False]


def test_our_convention_is_the_inverse_of_nn_multiheadattention():
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(1, 4, 8)
    _, weights = mha(x, x, x, attn_mask=~causal_mask(4))  # torch: True = blocked
    assert torch.all(weights[0].triu(1) == 0)
