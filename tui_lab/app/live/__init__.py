"""The one live model every view reads (`model`), and the App's side of it: building, loading, installing."""
