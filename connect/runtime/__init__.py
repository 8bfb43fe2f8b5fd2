"""The worker runtime: configs, plugins, task runners, error handling, offsets."""
