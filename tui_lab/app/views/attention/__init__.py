"""The Attention view (F2): masks and attention grids per layer and head."""
