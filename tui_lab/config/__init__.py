"""The one config that drives every architecture in the lab.

Field names follow the 2017 paper (`d_model`, `d_ff`, `heads`). Every variant axis is a single string
field whose allowed values are listed in `CHOICES`; the model registries map each value to a builder.
This package imports no torch, so the app can paint counts and shapes before torch has loaded.
`axes` holds the table of axes, `rules` what a valid config is, `model_config` the dataclass and how text sets it.
"""

from tui_lab.config.axes import AXES, CHOICES, FAMILIES, GATED, OPTIONAL_FIELDS, SHORTCUTS, Axis
from tui_lab.config.model_config import ModelConfig, field_names, field_types, parse_value, with_overrides
from tui_lab.config.rules import MAX_LAYERS, SCORE_BIAS_POSITIONS, is_nat

__all__ = ["AXES", "CHOICES", "FAMILIES", "GATED", "MAX_LAYERS", "OPTIONAL_FIELDS", "SCORE_BIAS_POSITIONS", "SHORTCUTS",
           "Axis", "ModelConfig", "field_names", "field_types", "is_nat", "parse_value", "with_overrides"]
