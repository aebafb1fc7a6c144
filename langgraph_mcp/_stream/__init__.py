"""What a call tells while it runs: ``progress`` (progress and log notifications as stream events,
the progress bar's UI message)."""
