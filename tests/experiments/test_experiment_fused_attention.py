"""fused-attention: the explicit path materialises at least one (N, H, L, L) tensor, the fused one does not, both
give the same output; the live-bytes counter counts what it sees."""

import pytest
import torch

from tui_lab.experiments import get
from tui_lab.experiments.fused_attention import live_bytes_mode, peak_bytes


def test_the_live_bytes_counter_sees_the_peak_of_tensors_alive_together():
    def call():
        a = torch.ones(1000)  # 4,000 bytes
        b = a * 2  # 4,000 more while a lives
        del a
        return b + 1  # a is gone: the peak stays 8,000

    assert peak_bytes(call, "cpu") == 8000
    with live_bytes_mode() as mode:
        torch.zeros(10, 10)
    assert mode.peak == 400 and mode.live == 0


def test_the_explicit_path_builds_the_weights_and_the_fused_one_does_not():
    exp = get("fused-attention")
    options = exp.resolve(sets={"lengths": "64,128", "heads": "2", "d_head": "8", "repeats": "1", "device": "cpu"})
    result = exp.run(options)
    for row in result.tables["lengths"].rows:
        length, fused_mib, explicit_mib, weights_mib, diff = row[0], row[3], row[4], row[5], row[6]
        assert weights_mib == pytest.approx(2 * length * length * 4 / 2**20, abs=1e-3)
        assert explicit_mib >= weights_mib > fused_mib
        assert diff < 1e-5
    assert result.scalars["memory_method"].startswith("bytes of tensors")
    assert [c.label for c in result.plots["memory"].curves] == ["fused", "explicit", "predicted (N,H,L,L)"]


def test_a_device_that_is_not_there_is_one_line():
    with pytest.raises(ValueError, match="device"):
        get("fused-attention").resolve(sets={"device": "tpu"})
