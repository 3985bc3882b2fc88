import pytest
import torch

from tui_lab.devices import pick_device
from tui_lab.hardware import matmul_peak_flops


def test_pick_device_checks_what_exists():
    assert pick_device("cpu") == "cpu"
    assert pick_device(None) in ("cpu", "cuda", "mps")
    with pytest.raises(ValueError, match="device"):
        pick_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="not available"):
            pick_device("cuda")


def test_matmul_peak_is_measured_and_leaves_the_rng_alone():
    state = torch.get_rng_state()
    peak = matmul_peak_flops("cpu", size=128, repeats=2)
    assert torch.equal(state, torch.get_rng_state())
    assert 1e8 < peak < 1e15  # FLOP/s: some real number, not a hard-coded datasheet figure
    assert matmul_peak_flops("cpu") == matmul_peak_flops("cpu")  # measured once, then cached
