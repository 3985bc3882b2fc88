"""layernorm-vs-batchnorm: layernorm reads one token's features, batchnorm one feature of every real token."""

import math

import pytest
import torch

from tui_lab.experiments import get
from tui_lab.experiments.layernorm_vs_batchnorm import RUNS, reach


def test_layernorm_reads_one_token_and_batchnorm_one_feature_of_the_real_tokens():
    lengths, e = (4, 2, 3), 5
    ln, bn = reach("layernorm", lengths, e, (0, 1, 2)), reach("batchnorm", lengths, e, (0, 1, 2))
    assert ln.shape == bn.shape == (12, 5)  # (N*L, E)
    assert ln[1].tolist() == [1.0] * 5 and ln.sum() == 5  # token (n0, l1): all its features, nothing else
    real = [n * 4 + pos for n, length in enumerate(lengths) for pos in range(length)]
    assert sorted(bn[:, 2].nonzero().flatten().tolist()) == real  # feature 2 of the 9 real tokens ...
    assert bn.sum() == 9  # ... and no padding, no other feature


def test_a_tiny_run_trains_all_three_on_padded_batches():
    exp = get("layernorm-vs-batchnorm")
    options = exp.resolve(sets={"steps": "3", "batch_size": "4", "seq_len": "16", "d_model": "16", "heads": "2",
                                "layers": "1"})
    before = torch.get_num_threads()
    result = exp.run(options)
    assert torch.get_num_threads() == before  # the run's one thread is handed back
    assert [c.label for c in result.plots["loss"].curves] == [label for label, _, _ in RUNS]
    assert all(math.isfinite(v) for k, v in result.scalars.items() if k.startswith("val_"))
    assert result.scalars["layernorm_reads"] == 6 and result.scalars["batchnorm_reads"] == 9
    assert len(result.grids["batchnorm_reach"].values) == 12  # 3 sequences x 4 positions


def test_a_batch_of_one_is_refused():
    with pytest.raises(ValueError, match=r"^batch_size \(1\) must be at least 2$"):
        get("layernorm-vs-batchnorm").resolve(sets={"batch_size": "1"})


def test_zero_threads_are_refused():
    with pytest.raises(ValueError, match=r"^threads \(0\) must be at least 1$"):
        get("layernorm-vs-batchnorm").resolve(sets={"threads": "0"})
