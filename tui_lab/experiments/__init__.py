"""Experiments: the seeds' lessons as named, reproducible runs with results to draw and export.

`registry.get(name).run(options, progress, cancel) -> Result`; see `base.py` for the contract and
`registry.py` for the list. The CLI's `tui-lab experiment` and the app's Experiments view are two faces
over this package; it never imports textual or rich.
"""

from tui_lab.experiments.base import Cancelled, Experiment
from tui_lab.experiments.registry import experiments, get, names
from tui_lab.experiments.result import Curve, Grid, Plot, Result, Table

__all__ = ["Cancelled", "Curve", "Experiment", "Grid", "Plot", "Result", "Table", "experiments", "get", "names"]
