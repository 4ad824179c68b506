"""The shared per-file analysis: one pass, read by every rule."""

from devfix.analysis.facts import DeviceRef, FileFacts, Loader, LoaderLoop, Model, Optimizer

__all__ = ["DeviceRef", "FileFacts", "Loader", "LoaderLoop", "Model", "Optimizer"]
