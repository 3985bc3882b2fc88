"""Seed 002's guided cross-attention kinds (section 4, Tips 2), as numbers both the model and the counts read.

The `cross_attention` axis (encoder-decoder only): `softmax` is the 2017 paper's; `location-aware` and
`monotonic` are the two named kinds of guided attention (tui_lab/model/guided_cross.py builds them). The
diagonal prior beside them is a training loss, not an architecture (`TrainConfig.guided_attention`).
No torch here: the app counts before torch has loaded.
"""

from __future__ import annotations

from tui_lab.config import ModelConfig

# Location-aware attention (Chorowski et al. 2015, section 2.2): k = 10 filters over the previous alignment, as
# the paper; its width r = 201 covered hundreds of speech frames, the lab's sources are words up to max_len,
# so a width of 5 sees two words either side of where the last step looked (enough to learn "one further").
LOCATION_FILTERS = 10
LOCATION_WIDTH = 5

# Monotonic attention (Raffel et al. 2017, section 2.5): energies get a learned scalar offset r, started
# negative so that early in training each source word is passed over rather than stopped at; Gaussian noise of
# standard deviation 1 before the sigmoid in training pushes the energies far from 0, so the hard decisions
# at decoding (stop where sigmoid(e) >= 0.5) match what training saw.
MONOTONIC_R_INIT = -4.0
MONOTONIC_NOISE_STD = 1.0


def guided_cross_params(c: ModelConfig) -> int:
    """What one decoder layer's cross-attention adds to softmax's projections.

    location-aware: the Conv1d over the alignment (filters x width, no bias: the key projection has one) and
    the Linear (no bias) from the filters into every head's key space (filters x E); monotonic: one offset r
    per head (every head is monotonic, each with its own alignment)."""
    if c.family != "encoder-decoder":
        return 0
    if c.cross_attention == "location-aware":
        return LOCATION_FILTERS * LOCATION_WIDTH + LOCATION_FILTERS * c.d_model
    if c.cross_attention == "monotonic":
        return c.heads
    return 0
