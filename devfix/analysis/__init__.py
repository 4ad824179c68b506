"""The shared analysis: one pass per file, a device-flow evaluation, read by every rule.

Nothing is imported here: the run's cheap steps (the project index, the cache, the workers'
set-up) import their modules without the parser and the flow behind `facts.FileFacts`."""
