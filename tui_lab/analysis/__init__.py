"""Pure analysis of a config: parameters, shapes, FLOPs and memory. Arithmetic only, no torch."""

from tui_lab.analysis.cost import Memory, flops_per_token, memory
from tui_lab.analysis.params import ParamCount, count_params
from tui_lab.analysis.shapes import ShapeRow, shape_trace

__all__ = ["Memory", "ParamCount", "ShapeRow", "count_params", "flops_per_token", "memory", "shape_trace"]
