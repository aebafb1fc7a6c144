/**
 * The generative-UI components this project's graphs push (``push_ui_message``), by name.
 *
 * Registered under ``ui`` in langgraph.json for each graph, so ``langgraph dev`` bundles this file
 * and serves it to Agent Chat UI and any other ``LoadExternalComponent`` client. Add further
 * components here (one registration for all of them). The packages they import are pinned in
 * ``package.json`` / ``package-lock.json`` here: run ``npm ci`` in this folder before
 * ``langgraph dev``.
 */
import { MCPApp } from "./mcp-app";
import { ProgressBar } from "./progress";

export default {
  "mcp-progress": ProgressBar,
  "mcp-app": MCPApp,
};
