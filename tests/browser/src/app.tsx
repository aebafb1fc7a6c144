/**
 * A chat page built the way Agent Chat UI builds its own, from the same packages: the thread
 * comes from ``useStream`` (``@langchain/langgraph-sdk/react``), generative-UI messages from the
 * custom stream are folded into ``values.ui`` and rendered next to the AI message they name
 * (``metadata.message_id``) with ``LoadExternalComponent``, and an interrupt whose value has
 * ``action_requests``/``review_configs`` gets a form per action request (approve, edit or
 * reject), resumed with ``{"decisions": [...]}``. Edited values are sent as strings, as that UI's
 * text fields send them.
 *
 * Query parameters: ``apiUrl`` (the LangGraph server), ``assistantId`` (a graph id).
 */
import { useState } from "react";
import { createRoot } from "react-dom/client";
import type { Message } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import {
  LoadExternalComponent,
  isRemoveUIMessage,
  isUIMessage,
  uiMessageReducer,
  type UIMessage,
} from "@langchain/langgraph-sdk/react-ui";

type DecisionType = "approve" | "edit" | "reject";
type ActionRequest = { name: string; args: Record<string, unknown>; description?: string };
type ReviewConfig = { action_name: string; allowed_decisions: DecisionType[] };
type HITLRequest = { action_requests: ActionRequest[]; review_configs: ReviewConfig[] };
type Decision =
  | { type: "approve" }
  | { type: "reject"; message?: string }
  | { type: "edit"; edited_action: { name: string; args: Record<string, unknown> } };
type State = { messages: Message[]; ui?: UIMessage[] };

const params = new URLSearchParams(window.location.search);
const API_URL = params.get("apiUrl") ?? "http://127.0.0.1:2024";
const ASSISTANT_ID = params.get("assistantId") ?? "agent";

function text(content: Message["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((part) => ("text" in part && typeof part.text === "string" ? part.text : ""))
    .join("");
}

function hitlRequest(value: unknown): HITLRequest | null {
  if (!value || typeof value !== "object") return null;
  const { action_requests, review_configs } = value as Partial<HITLRequest>;
  if (!Array.isArray(action_requests) || !Array.isArray(review_configs)) return null;
  return { action_requests, review_configs };
}

function shown(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

function ActionForm(props: {
  index: number;
  request: ActionRequest;
  config: ReviewConfig | undefined;
  onDecide: (decision: Decision) => void;
}) {
  const { index, request, config } = props;
  const allowed = config?.allowed_decisions ?? ["approve", "reject"];
  const [edits, setEdits] = useState<Record<string, string>>(() =>
    Object.fromEntries(Object.entries(request.args).map(([k, v]) => [k, shown(v)])),
  );
  const [reason, setReason] = useState("");
  return (
    <fieldset data-testid="action-request" data-index={index} data-action={request.name}>
      <legend>{request.name}</legend>
      {request.description ? (
        <p data-testid="action-description" style={{ whiteSpace: "pre-wrap" }}>
          {request.description}
        </p>
      ) : null}
      {Object.keys(edits).map((key) => (
        <label key={key} style={{ display: "block" }}>
          {key}{" "}
          <input
            name={key}
            value={edits[key]}
            readOnly={!allowed.includes("edit")}
            onChange={(e) => setEdits({ ...edits, [key]: e.target.value })}
          />
        </label>
      ))}
      {allowed.includes("approve") ? (
        <button type="button" data-decision="approve" onClick={() => props.onDecide({ type: "approve" })}>
          Approve
        </button>
      ) : null}
      {allowed.includes("edit") ? (
        <button
          type="button"
          data-decision="edit"
          onClick={() =>
            props.onDecide({ type: "edit", edited_action: { name: request.name, args: { ...edits } } })
          }
        >
          Submit edits
        </button>
      ) : null}
      {allowed.includes("reject") ? (
        <span>
          <input name="__reason" placeholder="reason" value={reason} onChange={(e) => setReason(e.target.value)} />
          <button
            type="button"
            data-decision="reject"
            onClick={() => props.onDecide(reason ? { type: "reject", message: reason } : { type: "reject" })}
          >
            Reject
          </button>
        </span>
      ) : null}
    </fieldset>
  );
}

function Review(props: { request: HITLRequest; onSubmit: (decisions: Decision[]) => void }) {
  const { action_requests, review_configs } = props.request;
  const [decisions, setDecisions] = useState<(Decision | undefined)[]>(() => action_requests.map(() => undefined));
  const decide = (index: number, decision: Decision) => {
    const next = decisions.slice();
    next[index] = decision;
    setDecisions(next);
    if (next.every((d) => d !== undefined)) props.onSubmit(next as Decision[]);
  };
  return (
    <section data-testid="review">
      {action_requests.map((request, i) => (
        <div key={i} data-decided={decisions[i]?.type ?? ""}>
          <ActionForm
            index={i}
            request={request}
            config={review_configs.find((c) => c.action_name === request.name) ?? review_configs[i]}
            onDecide={(d) => decide(i, d)}
          />
        </div>
      ))}
    </section>
  );
}

function App() {
  const [errors, setErrors] = useState<string[]>([]);
  const thread = useStream<State>({
    apiUrl: API_URL,
    assistantId: ASSISTANT_ID,
    messagesKey: "messages",
    onCustomEvent: (event, options) => {
      if (isUIMessage(event) || isRemoveUIMessage(event)) {
        options.mutate((prev) => ({ ...prev, ui: uiMessageReducer(prev.ui ?? [], event) }));
      }
    },
    onError: (error) => setErrors((prev) => [...prev, String(error)]),
  });
  const [draft, setDraft] = useState("");
  const ui = thread.values.ui ?? [];
  // Several pending interrupts come as an array: like Agent Chat UI, show the first one.
  const current = Array.isArray(thread.interrupt) ? thread.interrupt[0] : thread.interrupt;
  const pending = current ? hitlRequest(current.value) : null;

  const send = (e: React.FormEvent) => {
    e.preventDefault();
    if (!draft.trim()) return;
    thread.submit({ messages: [{ type: "human", content: draft } as Message] }, { streamMode: ["values"] });
    setDraft("");
  };

  return (
    <main style={{ fontFamily: "system-ui, sans-serif", maxWidth: "40rem", margin: "1rem auto", padding: "12px" }}>
      <div data-testid="messages">
        {thread.messages.map((message, i) => (
          <div key={message.id ?? i} data-testid={`message-${message.type}`} data-message-id={message.id}>
            <div className="content" style={{ whiteSpace: "pre-wrap" }}>
              <b>{message.type === "human" ? "You" : message.type === "ai" ? "Assistant" : "Tool"}:</b>{" "}
              {text(message.content)}
            </div>
            {message.type === "ai"
              ? (message.tool_calls ?? []).map((call) => (
                  <div key={call.id} data-testid="tool-call" style={{ color: "#6b7280", fontSize: "13px" }}>
                    {call.name} {JSON.stringify(call.args)}
                  </div>
                ))
              : null}
            {message.type === "ai"
              ? ui
                  .filter((m) => m.metadata?.message_id === message.id)
                  .map((m) => (
                    <LoadExternalComponent key={m.id} stream={thread} message={m} meta={{ ui: m }} />
                  ))
              : null}
          </div>
        ))}
      </div>
      {current && !pending ? (
        <pre data-testid="generic-interrupt">{JSON.stringify(current.value, null, 2)}</pre>
      ) : null}
      {pending ? (
        <Review
          key={current?.id ?? "review"}
          request={pending}
          onSubmit={(decisions) =>
            thread.submit(null, { command: { resume: { decisions } }, streamMode: ["values"] })
          }
        />
      ) : null}
      <form onSubmit={send} style={{ marginTop: "1rem" }}>
        <textarea
          data-testid="composer"
          rows={2}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          style={{ width: "30rem", verticalAlign: "bottom" }}
        />
        <button type="submit">Send</button>
      </form>
      <div data-testid="status" data-loading={thread.isLoading ? "true" : "false"} />
      {errors.map((e, i) => (
        <div key={i} data-testid="error" style={{ color: "#dc2626" }}>
          {e}
        </div>
      ))}
    </main>
  );
}

createRoot(document.getElementById("root")!).render(<App />);
