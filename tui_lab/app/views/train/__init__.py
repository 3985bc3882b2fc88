"""The Train view (F4): the form, the trainer process, the live plots and the run's files."""
