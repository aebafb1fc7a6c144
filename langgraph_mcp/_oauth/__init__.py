"""Per-user OAuth for HTTP MCP servers: sealed token records in the graph's store, the OAuth
steps, and the call wrapper that asks the user to connect through an interrupt."""
