"""codebase-rag: local, offline semantic code search for AI coding agents."""
__version__ = "0.1.0"             # pyproject.toml reads it from here
