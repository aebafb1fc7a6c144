"""One tool call, from the LangChain adapter to the session and back: ``adapter``
(:class:`~langgraph_mcp.MCPTool`), ``entry`` (what a tool is built from), ``arguments`` (checked
against the schema), ``approval`` (asked of a person), ``runner`` (session choice, clock, drain),
``results`` (what the outcome becomes), ``output`` (how much the model sees), ``trace`` (spans),
``view`` (the MCP Apps view sent with a result)."""
