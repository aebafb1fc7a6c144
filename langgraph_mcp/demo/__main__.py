"""``python -m langgraph_mcp.demo NAME [--http PORT]``: run one of the demo servers."""

from langgraph_mcp.demo import main

if __name__ == "__main__":
    main()
