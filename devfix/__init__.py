"""devfix: repair PyTorch device-placement bugs with LibCST codemods."""

__version__ = "0.1.0"
