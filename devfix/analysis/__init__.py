"""The shared analysis: one pass per file, a device-flow evaluation, read by every rule."""

from devfix.analysis.facts import FileFacts

__all__ = ["FileFacts"]
