"""Graphs served by ``langgraph dev`` / LangGraph server (see ``langgraph.json``)."""
