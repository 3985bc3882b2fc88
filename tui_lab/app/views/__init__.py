"""One view per module; `tui_lab.app.app.VIEWS` lists them."""
