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

/** A 404, or a 422 on the path itself (an id that is no id): the address names nothing. */
function namesNothing(error: Error): boolean {
  if (!(error instanceof ApiError)) return false;
  if (error.status === 404) return true;
  const detail = (error.detail as { detail?: unknown } | null)?.detail;
  return error.status === 422 && Array.isArray(detail) && detail.length > 0 && detail.every((d: { loc?: unknown[] }) => d.loc?.[0] === "path");
}

export function ErrorState({ error, retry }: { error: Error; retry?: () => void }) {
  if (namesNothing(error))
    // trying again finds nothing either: say why it may be missing and where to go instead
    return (
      <div className="state error" role="alert" data-testid="not-found">
        <strong>Not found.</strong> Nothing here by this address: it may have been removed, or belong to another organization than
        the one selected at the top. <Link href="/servers">Servers</Link> · <Link href="/">Clusters</Link>
      </div>
    );
  return (
    <div className="state error" role="alert">
      <strong>Something went wrong.</strong> {error.message}
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
      <p>
        Install one beside each memcached server: on the <Link href="/agents">Agents</Link> page, create an agent key and copy the
        install block (it installs the Debian package, writes the configuration and key, and starts the agent). The page then waits
        for the first upload, which comes about a minute later.
      </p>
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

/** What a form's last action said: a confirmation (role status) and/or an error (role alert). */
export function FormNotes({ ok, error }: { ok: string | null; error: string | null }) {
  return (
    <>
      {ok && (
        <p className="form-ok wrap-anywhere" role="status">
          {ok}
        </p>
      )}
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}
