/**
 * ``mcp-app``: one MCP Apps view (``ui://`` HTML) of a tool call, as pushed by langgraph-mcp
 * (props: the ``app-ui-props`` JSON Schema in docs/schemas).
 *
 * The view runs in an iframe sandboxed to scripts only (an opaque origin: no cookies, no storage,
 * no access to this page), its Content-Security-Policy built from the server's ``csp`` and put
 * first in the document. The component is the view's host in the MCP Apps protocol, through
 * ``AppBridge`` from ``@modelcontextprotocol/ext-apps``: it answers ``ui/initialize``, sends the
 * call's arguments (``ui/notifications/tool-input``) and result (``ui/notifications/tool-result``),
 * follows the view's size changes, opens http(s) links in a new tab once the person saw the URL and
 * said yes, and passes on the view's
 * ``tools/call`` and ``resources/read`` to the deployment's route
 * (``POST /mcp-apps/threads/<thread>/call``), which runs them on the thread under the graph's
 * policies (each with the header ``X-MCP-App-Call: 1``, so that it also passes Agent Chat UI's ``/api``
 * passthrough, which sends bodies as text). A call the route refuses fails at once with the route's
 * message (no retries; one refused for too many calls at once is tried again after ``Retry-After``).
 * A call waiting for a person's approval is asked again until the thread answered it.
 * A view's ``ui/message`` is shown to the person, and sent as the next human message of the thread
 * only once they said yes (at most ``MESSAGE_RATE`` proposals a minute, none while a run is in
 * progress or the thread waits for a person); its ``ui/update-model-context`` is kept and sent with
 * that message (``mcp_app_context``). A view may ask for full screen or picture-in-picture
 * (``ui/request-display-mode``) and offer a file (``ui/download-file``: embedded, at most
 * ``MAX_DOWNLOAD_BYTES``, saved under a safe name once the person said yes; a name that could run as a
 * program is refused). Its frame gets none of the permissions its server declares (camera,
 * microphone, geolocation, clipboard-write) until the person allowed them (the view is then shown
 * again with them), and never full screen (the host shows it full screen). ``sampling/createMessage``
 * is refused unless the deployment registered a handler with :func:`allowSampling`. Once the view's
 * frame holds another document (the view navigated it, or wrote over its own), the bridge is
 * closed: each message of the frame is passed on, and each of the bridge's posted to it, only once
 * the document in it proved to be the copy this component made (``ViewTransport``), so that document
 * gets no answer; the person may show the view again (a fresh copy of the server's document).
 * Everything refused reaches the view as a JSON-RPC error (code ``REFUSED``).
 */
import { useEffect, useMemo, useRef, useState } from "react";
import { AppBridge } from "@modelcontextprotocol/ext-apps/app-bridge";
import { useStreamContext } from "@langchain/langgraph-sdk/react-ui";
import {
  CONSENT_TIMEOUT_MS,
  DISPLAY_MODES,
  type DisplayMode,
  type Json,
  MAX_HEIGHT,
  MAX_MESSAGE_CHARS,
  MESSAGE_RATE,
  METHOD_NOT_FOUND,
  type MCPAppProps,
  RATE_WINDOW_MS,
  ViewTransport,
  allowAttribute,
  contentSecurityPolicy,
  digest,
  downloadable,
  failure,
  hostContext,
  linkShown,
  permissionsAsked,
  refusal,
  samplingHandler,
  threadBusy,
  viewCall,
  viewToken,
  withPolicy,
} from "./mcp-app-host";

export * from "./mcp-app-host";

const loadCounts = new WeakMap<HTMLIFrameElement, number>();

type Consent = { kind: "message" | "download" | "link"; text: string; answer: (yes: boolean) => void };

const CONSENT_WORDS: Record<Consent["kind"], [string, string, string]> = {
  message: ["wants to send this message as you:", "Send it", "Don't send"],
  download: ["offers a file to save:", "Save", "Don't save"],
  link: ["wants to open this link in a new tab:", "Open", "Don't open"],
};

export function MCPApp(props: MCPAppProps) {
  const stream = useStreamContext() as any;
  const streamRef = useRef(stream);
  streamRef.current = stream;
  const frame = useRef<HTMLIFrameElement>(null);
  const [height, setHeight] = useState(160);
  const [status, setStatus] = useState("loading");
  const [mode, setMode] = useState<DisplayMode>("inline");
  const [generation, setGeneration] = useState(0);
  const [consent, setConsent] = useState<Consent | null>(null);
  // The features the view's permissions ask for: none is its frame's until the person allowed them.
  const asked = useMemo(() => permissionsAsked(props.permissions), [props.permissions]);
  const [granted, setGranted] = useState<string[] | null>(asked.length ? null : []);
  const context = useRef<Json | null>(null);
  const bridgeRef = useRef<AppBridge | null>(null);
  const leaveRef = useRef<() => void>(() => {});
  const asking = useRef(false);
  const proposals = useRef<number[]>([]);
  const htmlKey = useMemo(() => digest(props.html ?? ""), [props.html]);
  // Each copy of the document gets a token of its own: only that copy can prove it is the view.
  const token = useMemo(() => viewToken(), [htmlKey, generation]);

  const changeMode = (next: DisplayMode) => {
    setMode(next);
    const bridge = bridgeRef.current;
    if (bridge) bridge.setHostContext({ ...hostContext(next) } as any);
  };

  useEffect(() => {
    const iframe = frame.current;
    if (!iframe || !iframe.contentWindow || !props.html) return;
    const view = { server: props.server, tool_call_id: props.tool_call_id, thread_id: props.thread_id };
    const capabilities: Json = {
      openLinks: {},
      serverTools: {},
      serverResources: {},
      updateModelContext: { text: {} },
      message: { text: {} },
      downloadFile: {},
    };
    if (samplingHandler()) capabilities.sampling = {};
    const bridge = new AppBridge(null, { name: "langgraph-mcp", version: "1" }, capabilities as any, {
      hostContext: hostContext("inline") as any,
    });
    bridgeRef.current = bridge;
    let closed = false;
    let pending: ((yes: boolean) => void) | null = null;

    /** Asks the person (one question per view at a time); no answer in time is a no. */
    const ask = (kind: Consent["kind"], text: string): Promise<boolean> =>
      new Promise((resolve) => {
        const timer = setTimeout(() => answer(false), CONSENT_TIMEOUT_MS);
        const answer = (yes: boolean) => {
          clearTimeout(timer);
          pending = null;
          setConsent(null);
          resolve(yes && !closed);
        };
        pending = answer;
        setConsent({ kind, text, answer });
      });
    const claim = () => {
      if (asking.current) throw refusal("another request of this view waits for the person's answer");
      asking.current = true;
    };

    const leave = () => {
      if (closed) return;
      closed = true;
      pending?.(false);
      void bridge.close().catch(() => {});
      bridgeRef.current = null;
      setMode("inline");
      setStatus("navigated");
    };
    leaveRef.current = leave;

    bridge.oninitialized = () => {
      if (closed) return;
      setStatus("ready");
      void bridge.sendToolInput({ arguments: props.arguments });
      void bridge.sendToolResult(props.result as any);
    };
    bridge.onsizechange = ({ height: h }) => {
      if (typeof h === "number" && h > 0) setHeight(Math.min(Math.ceil(h), MAX_HEIGHT));
    };
    bridge.onopenlink = async ({ url }) => {
      const shown = linkShown(url);
      if (shown === null) return { isError: true };
      claim();
      try {
        if (!(await ask("link", shown))) return { isError: true };
        window.open(shown, "_blank", "noopener,noreferrer");
        return {};
      } finally {
        asking.current = false;
      }
    };
    bridge.onrequestdisplaymode = async ({ mode: wanted }) => {
      const next = (DISPLAY_MODES as readonly string[]).includes(wanted) ? (wanted as DisplayMode) : null;
      if (next) changeMode(next);
      return { mode: next ?? (bridge as any)._hostContext?.displayMode ?? "inline" };
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
      const text = ((params as any).content ?? [])
        .filter((b: any) => b?.type === "text" && typeof b.text === "string")
        .map((b: any) => b.text)
        .join("\n");
      if (!text) throw refusal("only text messages are sent");
      if (text.length > MAX_MESSAGE_CHARS) throw refusal(`a message is at most ${MAX_MESSAGE_CHARS} characters`);
      if (!props.thread_id) throw refusal("this view's call ran outside a thread: it cannot send messages");
      claim();
      try {
        const busy = await threadBusy(streamRef.current, props.thread_id);
        if (busy) throw refusal(busy);
        const now = Date.now();
        proposals.current = proposals.current.filter((t) => now - t < RATE_WINDOW_MS);
        if (proposals.current.length >= MESSAGE_RATE) {
          throw refusal(`this view proposed ${MESSAGE_RATE} messages in the last minute; try again later`);
        }
        proposals.current.push(now);
        if (!(await ask("message", text))) throw refusal("the person did not send the view's message");
        const current = streamRef.current;
        const still = await threadBusy(current, props.thread_id);
        if (still) throw refusal(still);
        if (closed || typeof current?.submit !== "function") throw refusal("the view is no longer shown");
        const values: Json = { messages: [{ type: "human", content: text }] };
        if (context.current) values.mcp_app_context = context.current;
        void current.submit(values);
        return {};
      } finally {
        asking.current = false;
      }
    };
    bridge.ondownloadfile = async (params) => {
      const file = downloadable(params);
      claim();
      try {
        if (!(await ask("download", `${file.name} (${file.bytes.length} bytes)`))) {
          throw refusal("the person did not save the file");
        }
        const url = URL.createObjectURL(new Blob([file.bytes], { type: "application/octet-stream" }));
        const link = document.createElement("a");
        link.href = url;
        link.download = file.name;
        link.rel = "noopener";
        document.body.appendChild(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60_000);
        return {};
      } finally {
        asking.current = false;
      }
    };
    bridge.oncreatesamplingmessage = async (params) => {
      const handler = samplingHandler();
      if (!handler) {
        throw refusal("sampling/createMessage is not offered to views by this deployment", METHOD_NOT_FOUND);
      }
      return (await handler(params as Json, view)) as any;
    };
    const transport = new ViewTransport(iframe.contentWindow, token);
    transport.onleave = leave;
    void bridge.connect(transport).catch(() => setStatus("failed"));
    return () => {
      if (closed) return; // left its document: already closed
      closed = true;
      pending?.(false);
      bridgeRef.current = null;
      void bridge.close().catch(() => {});
    };
  }, [props.tool_call_id, props.html, generation, token]);

  useEffect(() => {
    if (mode === "inline") return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") changeMode("inline");
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [mode]);

  if (!props.html) {
    return (
      <div data-testid="mcp-app" data-status="no-view" style={box(props, "inline")}>
        {props.server} · {props.tool_name}: the view is too large to show here.
      </div>
    );
  }
  const policy = contentSecurityPolicy(props.csp);
  return (
    <div
      data-testid="mcp-app"
      data-status={status}
      data-display-mode={mode}
      data-tool-call-id={props.tool_call_id}
      style={box(props, mode)}
    >
      {mode !== "inline" ? (
        <div style={bar}>
          <span>
            {props.server} · {props.tool_name}
          </span>
          <button type="button" onClick={() => changeMode("inline")}>
            {mode === "fullscreen" ? "Exit full screen" : "Back to the chat"}
          </button>
        </div>
      ) : null}
      {status === "navigated" ? (
        <div data-testid="mcp-app-navigated" style={bar}>
          <span>The view left the page its server sent: it is no longer connected to this chat.</span>
          <button
            type="button"
            onClick={() => {
              setStatus("loading");
              setGeneration((g) => g + 1);
            }}
          >
            Show the view again
          </button>
        </div>
      ) : null}
      <iframe
        key={`${generation}:${htmlKey}`}
        ref={frame}
        title={`${props.server} · ${props.tool_name}`}
        sandbox="allow-scripts"
        allow={allowAttribute(granted ?? [])}
        srcDoc={withPolicy(props.html, policy, token)}
        onLoad={(event) => {
          // The first load is the view's document; any later one is another document.
          const element = event.currentTarget;
          const loads = (loadCounts.get(element) ?? 0) + 1;
          loadCounts.set(element, loads);
          if (loads > 1) leaveRef.current();
        }}
        style={{
          width: "100%",
          height: mode === "inline" ? `${height}px` : undefined,
          flex: mode === "inline" ? undefined : "1 1 auto",
          border: "none",
          display: "block",
        }}
      />
      {granted === null ? (
        <div data-testid="mcp-app-permissions" style={{ ...bar, display: "block" }}>
          <div>
            {`The ${props.server} view asks to use: ${asked.join(", ")}. Allowing it shows the view again ` +
              "with them (your browser may ask too)."}
          </div>
          <button
            type="button"
            onClick={() => {
              setGranted(asked);
              setStatus("loading");
              setGeneration((g) => g + 1);
            }}
          >
            Allow
          </button>{" "}
          <button type="button" onClick={() => setGranted([])}>
            Don't allow
          </button>
        </div>
      ) : null}
      {consent ? (
        <div data-testid="mcp-app-consent" data-kind={consent.kind} style={{ ...bar, display: "block" }}>
          <div>{`The ${props.server} view ${CONSENT_WORDS[consent.kind][0]}`}</div>
          <pre style={{ whiteSpace: "pre-wrap", wordBreak: "break-all", margin: "4px 0", maxHeight: "12rem", overflow: "auto" }}>
            {consent.text}
          </pre>
          <button type="button" onClick={() => consent.answer(true)}>
            {CONSENT_WORDS[consent.kind][1]}
          </button>{" "}
          <button type="button" onClick={() => consent.answer(false)}>
            {CONSENT_WORDS[consent.kind][2]}
          </button>
        </div>
      ) : null}
    </div>
  );
}

const bar = {
  display: "flex",
  justifyContent: "space-between",
  alignItems: "center",
  gap: "8px",
  padding: "4px 8px",
  background: "#f9fafb",
  borderBottom: "1px solid #e5e7eb",
};

function box(props: MCPAppProps, mode: DisplayMode) {
  const base = {
    fontFamily: "system-ui, sans-serif",
    fontSize: "13px",
    border: props.prefers_border === false ? "none" : "1px solid #e5e7eb",
    borderRadius: "8px",
    margin: "6px 0",
    maxWidth: "40rem",
    overflow: "hidden",
    background: "#fff",
    boxSizing: "border-box" as const,
  };
  if (mode === "fullscreen") {
    return { ...base, position: "fixed" as const, inset: 0, zIndex: 1000, margin: 0, maxWidth: "none",
      borderRadius: 0, display: "flex", flexDirection: "column" as const };
  }
  if (mode === "pip") {
    return { ...base, position: "fixed" as const, right: "16px", bottom: "16px", width: "360px", height: "280px",
      zIndex: 1000, margin: 0, display: "flex", flexDirection: "column" as const,
      boxShadow: "0 4px 16px rgba(0,0,0,.2)" };
  }
  return base;
}
