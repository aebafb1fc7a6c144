/**
 * What the ``mcp-app`` component (``mcp-app.tsx``) is built from, none of it React: the view's
 * props, its Content-Security-Policy and navigation guard, the checks and bounds of what a view
 * asks of its host (messages, downloads, sampling), and the way its calls reach the deployment's
 * route.
 */
import { PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

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
export const MAX_HEIGHT = 2000;
const POLL_MS = 1000;
const POLL_LIMIT = 600; // ten minutes for a person to answer an approval
/** A CSP source a view may declare: a scheme and a named host (``https://api.example.com``,
 * ``http://127.0.0.1:8123``), or every subdomain of a named domain (``https://*.example.com``);
 * never ``https://*``, a whole top-level domain (``https://*.com``), a wildcard inside a name, a
 * scheme alone (``https:``, ``data:``), a path, or a keyword. */
const SOURCE = /^(https?|wss?):\/\/(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$/;

export function allowedSource(source: unknown): source is string {
  if (typeof source !== "string" || source.length > 255 || !SOURCE.test(source)) return false;
  const host = source.split("://")[1].replace(/:\d+$/, "");
  return !host.startsWith("*.") || host.split(".").length >= 3;
}
/** At most this many messages a view may propose to the person in ``RATE_WINDOW_MS``. */
export const MESSAGE_RATE = 3;
export const RATE_WINDOW_MS = 60_000;
export const MAX_MESSAGE_CHARS = 16_000;
/** A question to the person not answered in this long is answered no. */
export const CONSENT_TIMEOUT_MS = 5 * 60_000;
/** The largest file a view may offer for download. */
export const MAX_DOWNLOAD_BYTES = 5_000_000;
/** The JSON-RPC error code of everything the host refuses a view. */
export const REFUSED = -32000;
export const METHOD_NOT_FOUND = -32601;
export const DISPLAY_MODES = ["inline", "fullscreen", "pip"] as const;
export type DisplayMode = (typeof DISPLAY_MODES)[number];
export const LEAVING = "langgraph-mcp/leaving";
export const CHECK = "langgraph-mcp/check";
export const HERE = "langgraph-mcp/here";
/** How long a check of the frame's document may go unanswered before the bridge is closed (the
 * view's page blocked that long, or another document holds the frame). */
export const CHECK_TIMEOUT_MS = 10_000;
/** The most messages of a view held while their sender is checked; more are dropped (logged). */
export const MAX_WAITING = 1024;

function randomHex(bytes: number): string {
  const values = new Uint8Array(bytes);
  crypto.getRandomValues(values);
  return Array.from(values, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A random token for one copy of a view's document (128 bits, hex): the guard put in that copy
 * answers the component's checks with it, and no other document knows it. */
export function viewToken(): string {
  return randomHex(16);
}

/** The guard's source (``__TOKEN__``, ``__LEAVING__``, ``__CHECK__`` and ``__HERE__`` replaced). */
const GUARD_SOURCE = `(() => {
  "use strict";
  const p = window.parent, t = __TOKEN__;
  const d = String(Math.random()).slice(2) + Date.now().toString(36);
  const dataOf = Object.getOwnPropertyDescriptor(MessageEvent.prototype, "data").get;
  const sourceOf = Object.getOwnPropertyDescriptor(MessageEvent.prototype, "source").get;
  const rootOf = Object.getOwnPropertyDescriptor(Document.prototype, "documentElement").get;
  const doc = document, root = rootOf.call(doc);
  try { document.currentScript.remove(); } catch (e) {}
  const say = (m) => { try { p.postMessage(m, "*"); } catch (e) {} };
  const leaving = (why) => say({ [__LEAVING__]: why });
  addEventListener("beforeunload", () => leaving("beforeunload"), true);
  addEventListener("pagehide", () => leaving("pagehide"), true);
  addEventListener("message", (e) => {
    let m, s;
    try { m = dataOf.call(e); s = sourceOf.call(e); } catch (x) { return; }
    if (e.isTrusted !== true || s !== p || rootOf.call(doc) !== root) return;
    if (m && typeof m === "object" && typeof m[__CHECK__] === "string") {
      say({ [__HERE__]: m[__CHECK__], token: t, doc: d });
    }
  }, true);
  say({ [__HERE__]: "hello", token: t, doc: d });
})();`;

/** The script put first in one copy of the view's document, before its own scripts (strict, with
 * the DOM getters it uses saved before any other script runs). It removes itself from the
 * document (the view's scripts cannot read its token), then:
 * - says hello with the copy's token and a random id of this document instance;
 * - tells the component when the document starts to navigate away (``beforeunload``, which comes
 *   before the next document is even asked for) or is unloaded, so that the bridge is closed as
 *   early as the browser allows;
 * - answers each of the component's checks (``{CHECK: nonce}``: a real message event from the
 *   parent, while the document is still the one it started in, not written over) with
 *   ``{HERE: nonce, token, doc}``.
 *
 * The component passes a message of the frame on, or posts one to it, only once a check sent
 * after it was queued was answered so: another document in the frame (the view navigated it, or
 * wrote over its own) cannot answer, however its messages and the leaving notice are ordered
 * between processes, and a nonce is random, so no answer can be made before its check. */
function guard(token: string): string {
  const source = GUARD_SOURCE.replace("__TOKEN__", JSON.stringify(token))
    .replace("__LEAVING__", JSON.stringify(LEAVING))
    .replaceAll("__CHECK__", JSON.stringify(CHECK))
    .replaceAll("__HERE__", JSON.stringify(HERE));
  return `<script>${source}</script>`;
}

export type SamplingHandler = (
  params: Record<string, unknown>,
  view: { server: string; tool_call_id: string; thread_id?: string },
) => Promise<Record<string, unknown>>;
let sampling: SamplingHandler | null = null;

/** Lets views ask for ``sampling/createMessage``: ``handler`` answers each request (with a
 * ``CreateMessageResult``), or pass ``null`` to refuse them again (the default). Call it from the
 * deployment's ``ui/index.tsx``; views created afterwards are told the host supports sampling. */
export function allowSampling(handler: SamplingHandler | null): void {
  sampling = handler;
}

/** The handler :func:`allowSampling` registered, if any. */
export function samplingHandler(): SamplingHandler | null {
  return sampling;
}

export function refusal(message: string, code: number = REFUSED): Error {
  return Object.assign(new Error(message), { code });
}

/** A file name from a resource URI: its last path segment, decoded, with anything but letters,
 * digits, ``.``, ``_``, ``-`` and spaces replaced by ``_``, no leading or trailing dots or spaces,
 * at most 100 characters; ``download`` if nothing is left. */
export function safeFilename(uri: unknown): string {
  let name = typeof uri === "string" ? uri.slice(0, 2048) : "";
  name = name.split(/[?#]/)[0].split(/[\\/]/).pop() ?? "";
  try {
    name = decodeURIComponent(name);
  } catch {
    // kept as it is
  }
  name = (name.split(/[\\/]/).pop() ?? "").replace(/[^A-Za-z0-9._ -]/g, "_");
  name = name.replace(/^[. ]+/, "").slice(0, 100).replace(/[. ]+$/, "");
  return name || "download";
}

/** Extensions of files a system may run, open as a program or install when the person opens the
 * file (Windows, macOS, Linux, scripts, shortcuts); a download with one is refused. */
export const EXECUTABLE = new Set(
  (
    "exe com bat cmd msi msp mst msc scr pif cpl dll sys drv ocx inf reg lnk url scf hta chm gadget " +
    "application appref-ms appx appxbundle msix msixbundle vb vbs vbe js jse mjs wsf wsc wsh ws ps1 " +
    "ps1xml ps2 psc1 psd1 psm1 jar jnlp xll xlam iso img vhd vhdx sh bash zsh csh ksh fish command " +
    "tool app dmg pkg mpkg deb rpm apk appimage run bin elf out desktop py pyc pyw pl rb php"
  ).split(" "),
);

/** Could a file of this name run as a program? (Its last extension, whatever its case; a name
 * with trailing dots or spaces, which Windows drops, was made safe by :func:`safeFilename`.) */
export function executableName(name: string): boolean {
  const trimmed = name.replace(/[. ]+$/, "");
  const dot = trimmed.lastIndexOf(".");
  return dot >= 0 && EXECUTABLE.has(trimmed.slice(dot + 1).trim().toLowerCase());
}

/** The one embedded file of a ``ui/download-file`` request, bounded; refused otherwise. */
export function downloadable(params: unknown): { name: string; bytes: Uint8Array } {
  const contents = (params as any)?.contents;
  if (!Array.isArray(contents) || contents.length !== 1) throw refusal("one file at a time");
  const item = contents[0];
  if (item?.type !== "resource" || typeof item.resource !== "object" || item.resource === null) {
    throw refusal('only an embedded file (type "resource") is downloaded, not a link');
  }
  const resource = item.resource;
  const tooLarge = () => refusal(`the file is larger than ${MAX_DOWNLOAD_BYTES} bytes`);
  let bytes: Uint8Array;
  if (typeof resource.text === "string") {
    if (resource.text.length > MAX_DOWNLOAD_BYTES) throw tooLarge();
    bytes = new TextEncoder().encode(resource.text);
  } else if (typeof resource.blob === "string") {
    if (resource.blob.length > Math.ceil(MAX_DOWNLOAD_BYTES / 3) * 4) throw tooLarge();
    let binary: string;
    try {
      binary = atob(resource.blob);
    } catch {
      throw refusal("the file's blob is not base64");
    }
    bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } else {
    throw refusal("the file has neither text nor blob");
  }
  if (bytes.length > MAX_DOWNLOAD_BYTES) throw tooLarge();
  const name = safeFilename(resource.uri);
  if (executableName(name)) throw refusal(`the file ${name} could run as a program: it is not saved`);
  return { name, bytes };
}

/** Why a message may not be sent to the thread now (a run in progress, a question for a person),
 * or ``null``: the stream's own state, then the thread's on the server. */
export async function threadBusy(stream: any, threadId: string): Promise<string | null> {
  const running = "a run of this thread is in progress";
  const waiting = "the thread waits for a person's answer";
  if (stream?.isLoading) return running;
  if (stream?.interrupt) return waiting;
  let thread: any;
  try {
    thread = await stream.client.threads.get(threadId);
  } catch {
    return "the thread's state could not be read";
  }
  if (thread?.status === "busy") return running;
  if (thread?.status === "interrupted") return waiting;
  return null;
}

/** The bridge's transport to one copy of a view's document (``token``, see :func:`guard`).
 *
 * It takes messages only from the frame's window, and passes each on to the bridge, or posts the
 * bridge's to the frame, only once the document in the frame proved to be that copy: a check
 * (``{CHECK: nonce}``) is sent after the message was queued, and answered with the copy's token
 * and the id of the document instance that said hello first (or answered first). An answer or a
 * hello with another token or id, a leaving notice, or no answer within ``CHECK_TIMEOUT_MS``
 * calls ``onleave``. At most ``MAX_WAITING`` messages of the view wait for a check. Once closed it
 * sends and delivers nothing. */
export class ViewTransport extends PostMessageTransport {
  closed = false;
  onleave: (() => void) | null = null;
  private readonly frameWindow: Window;
  private readonly token: string;
  private readonly deliver: (event: MessageEvent) => void;
  private waiting: MessageEvent[] = [];
  private outgoing: unknown[] = [];
  private checking: {
    nonce: string;
    incoming: number;
    outgoing: number;
    timer: ReturnType<typeof setTimeout>;
  } | null = null;
  private doc: unknown = null;
  private dropped = 0;

  constructor(frameWindow: Window, token: string) {
    super(frameWindow, frameWindow);
    this.frameWindow = frameWindow;
    this.token = token;
    const self = this as unknown as { messageListener: (event: MessageEvent) => void };
    this.deliver = self.messageListener;
    self.messageListener = (event: MessageEvent) => this.receive(event);
  }

  private receive(event: MessageEvent): void {
    if (this.closed || event.source !== this.frameWindow) return;
    const data = event.data;
    if (data && typeof data === "object") {
      if (LEAVING in data) return this.leave();
      if (HERE in data) return this.answered(data as Json);
    }
    if (this.waiting.length >= MAX_WAITING) {
      if (this.dropped++ === 0) console.warn(`mcp-app: over ${MAX_WAITING} messages of the view at once; dropped`);
      return;
    }
    this.waiting.push(event);
    if (!this.checking) this.check();
  }

  private check(): void {
    const nonce = randomHex(16);
    const timer = setTimeout(() => this.leave(), CHECK_TIMEOUT_MS);
    this.checking = { nonce, incoming: this.waiting.length, outgoing: this.outgoing.length, timer };
    try {
      this.frameWindow.postMessage({ [CHECK]: nonce }, "*");
    } catch {
      this.leave();
    }
  }

  /** Whether ``data`` (a hello or an answer) is of the copy: its token, and the document
   * instance first seen (pinned now if none was). */
  private ours(data: Json): boolean {
    if (data.token !== this.token || typeof data.doc !== "string") return false;
    if (this.doc === null) this.doc = data.doc;
    return data.doc === this.doc;
  }

  private answered(data: Json): void {
    if (data[HERE] === "hello") {
      if (!this.ours(data)) this.leave();
      return;
    }
    const checking = this.checking;
    if (!checking || data[HERE] !== checking.nonce) return;
    if (!this.ours(data)) return this.leave();
    clearTimeout(checking.timer);
    this.checking = null;
    for (const message of this.outgoing.splice(0, checking.outgoing)) {
      if (this.closed) return;
      void super.send(message as any);
    }
    for (const event of this.waiting.splice(0, checking.incoming)) {
      if (this.closed) return;
      this.deliver(event);
    }
    if ((this.waiting.length || this.outgoing.length) && !this.closed) this.check();
  }

  private leave(): void {
    if (this.closed) return;
    const onleave = this.onleave;
    this.stop();
    onleave?.();
  }

  private stop(): void {
    this.closed = true;
    if (this.checking) clearTimeout(this.checking.timer);
    this.checking = null;
    this.waiting = [];
    this.outgoing = [];
  }

  override async send(message: any, _options?: any): Promise<void> {
    if (this.closed) return;
    this.outgoing.push(message);
    if (!this.checking) this.check();
  }

  override async close(): Promise<void> {
    this.stop();
    await super.close();
  }
}

export function digest(text: string): string {
  let h = 5381;
  for (let i = 0; i < text.length; i++) h = (h * 33 + text.charCodeAt(i)) | 0;
  return (h >>> 0).toString(36) + ":" + text.length;
}

/** The view's CSP: the specification's restrictive default, opened only to declared origins. */
export function contentSecurityPolicy(csp: Record<string, unknown> | undefined): string {
  const origins = (key: string): string[] => {
    const value = csp?.[key];
    if (!Array.isArray(value)) return [];
    return value.filter(allowedSource).slice(0, 32);
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

/** The http(s) URL a view asks to open, as the person is shown it and it is opened (normalised:
 * an international host name in its ``xn--`` form, so a look-alike shows as what it is), or
 * ``null`` for anything else. */
export function linkShown(url: unknown): string | null {
  if (typeof url !== "string" || url.length > 4096) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return null;
  if (parsed.username || parsed.password) return null; // ``https://bank.com@evil.example``
  return parsed.href;
}

/** The features a view may ask for (``_meta.ui.permissions``), as Permissions Policy names. */
const PERMISSIONS: ReadonlyArray<[string, string]> = [
  ["camera", "camera"],
  ["microphone", "microphone"],
  ["geolocation", "geolocation"],
  ["clipboardWrite", "clipboard-write"],
];
/** Features a view's frame never has unless the person allowed them (full screen never: the host
 * shows a view full screen itself, ``ui/request-display-mode``). */
const DENIED = ["camera", "microphone", "geolocation", "clipboard-write", "clipboard-read", "fullscreen",
  "display-capture", "payment", "usb", "serial", "hid", "bluetooth", "midi", "screen-wake-lock",
  "web-share", "publickey-credentials-get", "identity-credentials-get", "storage-access"];

/** The features the view's ``permissions`` ask for (each one an object, as the spec has it), as
 * Permissions Policy names; anything else there is ignored. */
export function permissionsAsked(permissions: unknown): string[] {
  if (typeof permissions !== "object" || permissions === null) return [];
  const asked = permissions as Record<string, unknown>;
  return PERMISSIONS.filter(([key]) => typeof asked[key] === "object" && asked[key] !== null).map(
    ([, feature]) => feature,
  );
}

/** The frame's ``allow`` attribute: the ``granted`` features (those a view may ask for, once the
 * person allowed them), every other sensitive feature ``'none'``. */
export function allowAttribute(granted: readonly string[]): string {
  const may = new Set(PERMISSIONS.map(([, feature]) => feature).filter((f) => granted.includes(f)));
  return DENIED.map((feature) => (may.has(feature) ? `${feature} *` : `${feature} 'none'`)).join("; ");
}

/** ``html`` with the CSP ``<meta>`` and the navigation guard before anything else (after a
 * doctype, if any). */
export function withPolicy(html: string, policy: string, token: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, "&quot;")}">`;
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  const head = meta + guard(token);
  return doctype ? doctype[0] + head + html.slice(doctype[0].length) : head + html;
}

export type Json = Record<string, unknown>;

export function failure(message: string): Json {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** The header (value ``1``) sent with each call to the route: the route reads a body that a proxy
 * passed on as ``text/plain`` (Agent Chat UI's ``/api`` passthrough does) as JSON only with it,
 * which no page of another site can send without a CORS preflight. */
export const CALL_HEADER = "X-MCP-App-Call";
/** Attempts of a request refused with 429 (too many calls at once), each after its ``Retry-After``. */
const BUSY_TRIES = 3;

/** The route's answer to one request, with the stream's own client: its API URL, default headers
 * and request hook (authentication); never retried, but a 429 after its ``Retry-After`` (the route
 * refuses it before anything runs) and a poll (GET) that could not reach the server. Any other
 * refusal is an error at once, with the route's own message. */
async function route(stream: any, path: string, body?: Json): Promise<[Json, number]> {
  const client = stream?.client?.threads;
  if (!client || typeof client.apiUrl !== "string") throw new Error("no LangGraph client in the stream context");
  const headers: Record<string, string> = { ...(client.defaultHeaders ?? {}), [CALL_HEADER]: "1" };
  if (body) headers["content-type"] = "application/json";
  let init: any = { method: body ? "POST" : "GET", headers, body: body ? JSON.stringify(body) : undefined };
  const url = new URL(`${client.apiUrl}${path}`);
  if (typeof client.onRequest === "function") init = await client.onRequest(url, init);
  const send: typeof fetch = client.asyncCaller?.customFetch ?? fetch;
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await send(url.toString(), init);
    } catch (error: any) {
      if (!body && attempt < BUSY_TRIES) {
        await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
        continue;
      }
      throw new Error(`the deployment could not be reached: ${String(error?.message ?? error).slice(0, 300)}`);
    }
    const text = await response.text();
    let answer: any = {};
    try {
      answer = text ? JSON.parse(text) : {};
    } catch {
      answer = { error: text.slice(0, 500) };
    }
    if (response.status === 429 && attempt < BUSY_TRIES) {
      const wait = Math.min(Number(response.headers.get("retry-after")) || 2, 10);
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      continue;
    }
    if (response.status >= 400) {
      const why = typeof answer?.error === "string" ? answer.error : typeof answer?.detail === "string" ? answer.detail : text;
      throw new Error(`${String(why).slice(0, 500)} (HTTP ${response.status})`);
    }
    return [answer && typeof answer === "object" ? answer : {}, response.status];
  }
}

export async function viewCall(stream: any, props: MCPAppProps, method: string, params: Json): Promise<Json> {
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

/** The host context a view is given (and told the changes of). */
export function hostContext(mode: DisplayMode): Json {
  return { displayMode: mode, availableDisplayModes: [...DISPLAY_MODES], theme: "light" };
}
