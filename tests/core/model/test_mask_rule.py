"""The one mask rule: the same answer on ints (the app's grids, the counts) and on tensors (the model)."""

import itertools

import pytest
import torch

from tui_lab.analysis.attention_pattern import attended_pairs, query_keys
from tui_lab.app import grids
from tui_lab.app.views.attention.grids import Pattern, hatched_cells
from tui_lab.mask_rule import may_attend
from tui_lab.model.masks import causal_mask, local_mask

CASES = list(itertools.product([False, True], [0, 1, 2, 3, 4, 7], [0, 1, 2]))


@pytest.mark.parametrize("causal,window,glob", CASES)
def test_ints_and_tensors_agree(causal, window, glob):
    pos = torch.arange(9)
    tensor = local_mask(pos, pos, window, causal, glob) if window else \
        (causal_mask(9) if causal else torch.ones(9, 9, dtype=torch.bool))
    ints = [[bool(may_attend(q, k, causal, window, glob)) for k in range(9)] for q in range(9)]
    assert tensor.tolist() == ints


@pytest.mark.parametrize("causal,window,glob", CASES)
def test_counts_are_the_rule_counted(causal, window, glob):
    rule = [[may_attend(q, k, causal, window, glob) for k in range(11)] for q in range(11)]
    assert [sum(row) for row in rule] == [query_keys(q, 11, causal, window, glob) for q in range(11)]
    assert sum(map(sum, rule)) == attended_pairs(11, causal, window, glob)


def test_a_cache_offset_is_in_the_positions():
    # 3 cached tokens, 2 new queries (positions 3 and 4): the model's mask aligned to the end is the rule
    assert causal_mask(2, 5).tolist() == [[may_attend(q, k, True) for k in range(5)] for q in (3, 4)]


def test_the_app_grids_hatch_exactly_what_the_rule_forbids():
    assert grids.causal_grid(4) == [[float(may_attend(q, k, True)) for k in range(4)] for q in range(4)]
    hatched = hatched_cells(6, 6, Pattern(window=3, global_tokens=1), causal=True)
    assert hatched == [[not may_attend(q, k, True, 3, 1) for k in range(6)] for q in range(6)]
    assert hatched[0][1] and not hatched[5][0]  # above the diagonal hidden; the global token seen from 5
