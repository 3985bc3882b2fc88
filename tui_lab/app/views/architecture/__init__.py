"""The Architecture view (F1): the form, the live counts and their tabs."""
