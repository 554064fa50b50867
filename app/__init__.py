"""docshelf: a folder of documents served as MCP resources."""

__version__ = "0.1.0"
