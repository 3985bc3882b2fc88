"""The head detectors' scores by name, and the title each is shown under: one list for the measurement
(`tui_lab.mechanism.head_detectors`, which needs torch), `tui-lab heads` and the Attention view's table (which must
not import torch until a table is measured: tests/app/shell/test_app_launch.py). Names only, no torch."""

SCORES = ("previous", "duplicate", "induction")
TITLES = {"previous": "previous token", "duplicate": "duplicate token", "induction": "induction"}
