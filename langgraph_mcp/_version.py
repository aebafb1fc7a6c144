"""The package version, in a module of its own so that no low layer imports the package root."""

__version__ = "0.1.0"
