/**
 * ``mcp-app``: one MCP Apps view (``ui://`` HTML) of a tool call, as pushed by langgraph-mcp
 * (props: the ``app-ui-props`` JSON Schema in docs/schemas).
 *
 * The view runs in an iframe sandboxed to scripts only (an opaque origin: no cookies, no storage,
 * no access to this page), its Content-Security-Policy built from the server's ``csp`` and put
 * first in the document. The component is the view's host in the MCP Apps protocol, through
 * ``AppBridge`` from ``@modelcontextprotocol/ext-apps``: it answers ``ui/initialize``, sends the
 * call's arguments (``ui/notifications/tool-input``) and result (``ui/notifications/tool-result``),
 * follows the view's size changes, opens http(s) links in a new tab, and passes on the view's
 * ``tools/call`` and ``resources/read`` to the deployment's route
 * (``POST /mcp-apps/threads/<thread>/call``), which runs them on the thread under the graph's
 * policies. A call waiting for a person's approval is asked again until the thread answered it.
 * A view's ``ui/message`` is sent as the next human message of the thread; its
 * ``ui/update-model-context`` is kept and sent with that message (``mcp_app_context``).
 */
import { useEffect, useRef, useState } from "react";
import { AppBridge, PostMessageTransport, buildAllowAttribute } from "@modelcontextprotocol/ext-apps/app-bridge";
import { useStreamContext } from "@langchain/langgraph-sdk/react-ui";

export interface MCPAppProps {
  server: string;
  tool_name: string;
  mcp_tool: string;
  tool_call_id: string;
  thread_id?: string;
  resource_uri: string;
  mime_type: string;
  html?: string;
  csp?: Record<string, unknown>;
  permissions?: Record<string, unknown>;
  domain?: string;
  prefers_border?: boolean;
  arguments: Record<string, unknown>;
  result: Record<string, unknown>;
}

const ROUTE = "/mcp-apps";
const MAX_HEIGHT = 2000;
const POLL_MS = 1000;
const POLL_LIMIT = 600; // ten minutes for a person to answer an approval
const SOURCE = /^(https?|wss?):\/\/[A-Za-z0-9.*\-]+(:\d{1,5})?$/;

/** The view's CSP: the specification's restrictive default, opened only to declared origins. */
export function contentSecurityPolicy(csp: Record<string, unknown> | undefined): string {
  const origins = (key: string): string[] => {
    const value = csp?.[key];
    if (!Array.isArray(value)) return [];
    return value.filter((v): v is string => typeof v === "string" && SOURCE.test(v)).slice(0, 32);
  };
  const resources = origins("resourceDomains").join(" ");
  const connect = origins("connectDomains");
  const frames = origins("frameDomains");
  const bases = origins("baseUriDomains");
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`,
    `style-src 'unsafe-inline' ${resources}`,
    `img-src data: blob: ${resources}`,
    `font-src data: ${resources}`,
    `media-src data: blob: ${resources}`,
    `connect-src ${connect.length ? connect.join(" ") : "'none'"}`,
    `frame-src ${frames.length ? frames.join(" ") : "'none'"}`,
    `base-uri ${bases.length ? bases.join(" ") : "'none'"}`,
    "form-action 'none'",
  ].join("; ");
}

/** ``html`` with the CSP ``<meta>`` before anything else (after a doctype, if any). */
export function withPolicy(html: string, policy: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, "&quot;")}">`;
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  return doctype ? doctype[0] + meta + html.slice(doctype[0].length) : meta + html;
}

type Json = Record<string, unknown>;

function failure(message: string): Json {
  return { content: [{ type: "text", text: message }], isError: true };
}

async function route(stream: any, path: string, body?: Json): Promise<[Json, number]> {
  // The stream's own client: its API URL, default headers and request hooks (authentication).
  const client = stream?.client?.threads;
  if (!client || typeof client.fetch !== "function") throw new Error("no LangGraph client in the stream context");
  try {
    const [answer, response] = await client.fetch(path, {
      method: body ? "POST" : "GET",
      json: body,
      withResponse: true,
      signal: undefined,
    });
    return [answer ?? {}, response.status];
  } catch (error: any) {
    const text = String(error?.message ?? error);
    throw new Error(text.slice(0, 500));
  }
}

async function viewCall(stream: any, props: MCPAppProps, method: string, params: Json): Promise<Json> {
  if (!props.thread_id) throw new Error("this view's call ran outside a thread: it cannot call back");
  const base = `${ROUTE}/threads/${encodeURIComponent(props.thread_id)}`;
  const body: Json = { server: props.server, method, params };
  if (typeof stream?.assistantId === "string") body.assistant_id = stream.assistantId;
  let [answer, status] = await route(stream, `${base}/call`, body);
  for (let i = 0; status === 202 && answer.status === "pending" && i < POLL_LIMIT; i++) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    [answer, status] = await route(stream, `${base}/calls/${encodeURIComponent(String(answer.call_id))}`);
  }
  if (answer.status !== "done") throw new Error(String(answer.error ?? "the call did not finish"));
  return answer.result as Json;
}

export function MCPApp(props: MCPAppProps) {
  const stream = useStreamContext() as any;
  const streamRef = useRef(stream);
  streamRef.current = stream;
  const frame = useRef<HTMLIFrameElement>(null);
  const [height, setHeight] = useState(160);
  const [status, setStatus] = useState("loading");
  const context = useRef<Json | null>(null);

  useEffect(() => {
    const iframe = frame.current;
    if (!iframe || !iframe.contentWindow || !props.html) return;
    const bridge = new AppBridge(
      null,
      { name: "langgraph-mcp", version: "1" },
      {
        openLinks: {},
        serverTools: {},
        serverResources: {},
        updateModelContext: { text: {} },
        message: { text: {} },
      },
      { hostContext: { displayMode: "inline", availableDisplayModes: ["inline"], theme: "light" } as any },
    );
    bridge.oninitialized = () => {
      setStatus("ready");
      void bridge.sendToolInput({ arguments: props.arguments });
      void bridge.sendToolResult(props.result as any);
    };
    bridge.onsizechange = ({ height: h }) => {
      if (typeof h === "number" && h > 0) setHeight(Math.min(Math.ceil(h), MAX_HEIGHT));
    };
    bridge.onopenlink = async ({ url }) => {
      if (!/^https?:\/\//i.test(url)) return { isError: true };
      window.open(url, "_blank", "noopener,noreferrer");
      return {};
    };
    bridge.oncalltool = async (params) => {
      try {
        return (await viewCall(streamRef.current, props, "tools/call", params as Json)) as any;
      } catch (error: any) {
        return failure(`the call failed: ${error?.message ?? error}`) as any;
      }
    };
    bridge.onreadresource = async (params) => {
      return (await viewCall(streamRef.current, props, "resources/read", params as Json)) as any;
    };
    bridge.onupdatemodelcontext = async (params) => {
      context.current = { server: props.server, tool_call_id: props.tool_call_id, ...(params as Json) };
      return {};
    };
    bridge.onmessage = async (params) => {
      const current = streamRef.current;
      const text = ((params as any).content ?? [])
        .filter((b: any) => b?.type === "text" && typeof b.text === "string")
        .map((b: any) => b.text)
        .join("\n");
      if (!text || typeof current?.submit !== "function") return { isError: true };
      const values: Json = { messages: [{ type: "human", content: text }] };
      if (context.current) values.mcp_app_context = context.current;
      void current.submit(values);
      return {};
    };
    const transport = new PostMessageTransport(iframe.contentWindow, iframe.contentWindow);
    void bridge.connect(transport).catch(() => setStatus("failed"));
    return () => {
      void bridge.close();
    };
  }, [props.tool_call_id, props.html]);

  if (!props.html) {
    return (
      <div data-testid="mcp-app" data-status="no-view" style={box(props)}>
        {props.server} · {props.tool_name}: the view is too large to show here.
      </div>
    );
  }
  const policy = contentSecurityPolicy(props.csp);
  return (
    <div data-testid="mcp-app" data-status={status} data-tool-call-id={props.tool_call_id} style={box(props)}>
      <iframe
        ref={frame}
        title={`${props.server} · ${props.tool_name}`}
        sandbox="allow-scripts"
        allow={buildAllowAttribute(props.permissions as any)}
        srcDoc={withPolicy(props.html, policy)}
        style={{ width: "100%", height: `${height}px`, border: "none", display: "block" }}
      />
    </div>
  );
}

function box(props: MCPAppProps) {
  return {
    fontFamily: "system-ui, sans-serif",
    fontSize: "13px",
    border: props.prefers_border === false ? "none" : "1px solid #e5e7eb",
    borderRadius: "8px",
    margin: "6px 0",
    maxWidth: "40rem",
    overflow: "hidden",
    background: "#fff",
  };
}
