"""The Textual app: a thin shell over the headless core. Importing it never imports torch."""
