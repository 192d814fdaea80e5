// Whether notification channels may target private addresses (loopback, RFC 1918, link-local):
// refused by default; the install's administrators switch it here, at once, without a restart.
import { useState } from "react";
import { getPrivateTargets, setPrivateTargets } from "../api/endpoints";
import { useAsync } from "../hooks";
import { formatAge } from "../lib/format";
import { FormNotes } from "./States";

export function PrivateTargets() {
  const data = useAsync((signal) => getPrivateTargets(signal), []);
  const [error, setError] = useState<string | null>(null);
  if (data.state !== "ready") return null;
  const p = data.data;
  const change = async (allow: boolean) => {
    setError(null);
    try {
      await setPrivateTargets(allow);
      data.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const state = p.allowed
    ? "Channels may target private addresses (loopback, local network)"
    : "Channels may target public addresses only: loopback and local-network targets are refused";
  return (
    <div className="card small" data-testid="private-targets">
      <p>
        {state}
        {p.fromEnvironment ? " — allowed for good by HITCURVE_ALLOW_PRIVATE_WEBHOOKS on this install." : "."}
        {p.changedBy && ` Set by ${p.changedBy} ${formatAge(p.changedAt)}.`}
      </p>
      {p.canChange && !p.fromEnvironment ? (
        <label className="check">
          <input type="checkbox" checked={p.stored} onChange={(e) => void change(e.target.checked)} /> Allow private addresses for this
          install (self-hosted receivers)
        </label>
      ) : (
        !p.allowed && (
          <p className="muted">
            A self-hosted install&apos;s administrator can allow them here (HITCURVE_ADMIN_EMAILS), or on the host with{" "}
            <code>python -m hitcurve.notify.install_admin private-webhooks allow</code>; no restart either way.
          </p>
        )
      )}
      <FormNotes ok={null} error={error} />
    </div>
  );
}
