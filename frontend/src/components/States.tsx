import type { ReactNode } from "react";
import { ApiError } from "../api/client";
import { Link } from "./Link";

export function Loading({ what }: { what: string }) {
  return (
    <div className="state loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </div>
  );
}

export function ErrorState({ error, retry }: { error: Error; retry?: () => void }) {
  const status = error instanceof ApiError ? error.status : null;
  return (
    <div className="state error" role="alert">
      <strong>{status === 404 ? "Not found." : "Something went wrong."}</strong> {status === 404 ? "" : error.message}
      {retry && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

/** The answer to an empty fleet: how to get the first curve. */
export function NoAgentYet() {
  return (
    <Empty title="No agent has reported yet">
      <p>Here is how to install one beside each memcached server:</p>
      <ol>
        <li>
          Create an agent key on the <Link href="/agents">Agents</Link> page (it is shown once).
        </li>
        <li>
          Build and run the agent next to memcached:
          <pre>
            <code>{`make -C profiler-agent all
echo 'hca_…' > agent.key && chmod 600 agent.key
bin/hitcurve-agent run --memcached 127.0.0.1:11211 \\
  --backend-url ${location.origin} --agent-key-file agent.key`}</code>
          </pre>
        </li>
        <li>The first curve appears about a minute later, when the agent uploads its first snapshot.</li>
      </ol>
    </Empty>
  );
}

/** Loading / error / ready in one place, so every page handles all three. */
export function Fetched<T>({
  result,
  what,
  children,
}: {
  result: { state: "loading" | "error" | "ready"; data?: T; error?: Error; reload: () => void };
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (result.state === "loading") return <Loading what={what} />;
  if (result.state === "error") return <ErrorState error={result.error!} retry={result.reload} />;
  return <>{children(result.data as T)}</>;
}
