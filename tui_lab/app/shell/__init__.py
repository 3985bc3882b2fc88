"""The App shell's parts, each one job, each a plain object the App owns: the keys and their queue, mounting
the views, where the focus goes when a view opens; and the screens it draws on (the first frame, the steady
main screen)."""
