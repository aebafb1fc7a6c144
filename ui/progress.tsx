/**
 * ``mcp-progress``: one MCP tool call's progress, as pushed by langgraph-mcp (props: the
 * ``progress-ui-props`` JSON Schema in docs/schemas). Inline styles only: the component renders
 * inside a shadow root, so the host page's stylesheets do not reach it.
 */
type Status = "running" | "done" | "failed";

export interface ProgressProps {
  server: string;
  tool_name: string;
  tool_call_id: string;
  progress: number;
  total: number | null;
  message: string | null;
  status: Status;
}

const COLOURS: Record<Status, string> = {
  running: "#2563eb",
  done: "#16a34a",
  failed: "#dc2626",
};

const LABELS: Record<Status, string> = {
  running: "running",
  done: "done",
  failed: "failed",
};

function percent(props: ProgressProps): number | null {
  if (props.status === "done") return 100;
  if (props.total == null || !(props.total > 0)) return null;
  return Math.max(0, Math.min(100, (props.progress / props.total) * 100));
}

export function ProgressBar(props: ProgressProps) {
  const value = percent(props);
  const colour = COLOURS[props.status] ?? COLOURS.running;
  const count =
    props.total != null ? `${props.progress} / ${props.total}` : `${props.progress}`;
  return (
    <div
      data-testid="mcp-progress"
      data-status={props.status}
      data-tool-call-id={props.tool_call_id}
      style={{
        fontFamily: "system-ui, sans-serif",
        fontSize: "13px",
        border: "1px solid #e5e7eb",
        borderRadius: "8px",
        padding: "8px 10px",
        margin: "6px 0",
        maxWidth: "32rem",
        background: "#fff",
        color: "#111827",
      }}
    >
      <div style={{ display: "flex", justifyContent: "space-between", gap: "8px" }}>
        <span style={{ fontWeight: 600 }}>
          {props.server} · {props.tool_name}
        </span>
        <span style={{ color: colour }}>
          {LABELS[props.status] ?? props.status} · {count}
        </span>
      </div>
      <div
        role="progressbar"
        aria-label={`${props.tool_name} progress`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={value ?? undefined}
        style={{
          height: "6px",
          background: "#e5e7eb",
          borderRadius: "3px",
          overflow: "hidden",
          marginTop: "6px",
        }}
      >
        <div
          style={{
            height: "100%",
            width: value == null ? "30%" : `${value}%`,
            background: colour,
            transition: "width 0.2s",
          }}
        />
      </div>
      {props.message ? (
        <div data-testid="mcp-progress-message" style={{ marginTop: "6px", color: "#374151", whiteSpace: "pre-wrap" }}>
          {props.message}
        </div>
      ) : null}
    </div>
  );
}
