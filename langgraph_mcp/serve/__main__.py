"""``python -m langgraph_mcp.serve module:graph [--transport stdio|http --port N]``."""

from langgraph_mcp.serve._cli import main

if __name__ == "__main__":
    main()
