"""docshelf's own MCP protocol layer (DESIGN D1): one JSON-RPC core, two eras."""
