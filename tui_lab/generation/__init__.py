"""Generation's pieces: sampling, the cached/uncached decoder state, the streaming loop, beam search.

`tui_lab.generate` is the front door; import from there.
"""
