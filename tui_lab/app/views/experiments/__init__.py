"""The Experiments view (F7): the registered experiments, run and drawn."""
