"""Reusable widgets: heatmap, parameter bars, layer diagram, config comparison, config form."""
