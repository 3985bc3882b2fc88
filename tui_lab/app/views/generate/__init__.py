"""The Generate view (F5): prompts, streamed generation, sampling and comparison."""
