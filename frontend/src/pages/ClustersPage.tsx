import { useState, type FormEvent } from "react";
import { createCluster, listClusters, listServers } from "../api/endpoints";
import type { ClusterSummary } from "../api/types";
import { StatusBadge } from "../components/Bits";
import { keepFlags, limitAndUsed, limitDelta, limitLabel, limitWords, memoryStateSentence, neededTotal, warmupSentence, windowLimitWords } from "../components/TargetAnswer";
import { isUnknown } from "../api/endpoints";
import { Link } from "../components/Link";
import { ErrorState, Loading, NoAgentYet } from "../components/States";
import { useAsync } from "../hooks";
import { MEASURED_HIT_RATE, MEASURED_HIT_RATE_MEANS, MEMORY_LIMIT, formatBytes, formatBytesDelta, formatMoney, formatHitRate } from "../lib/format";
import { canWrite, useSession } from "../session";

export function ClustersPage() {
  const data = useAsync(async (signal) => {
    const [clusters, servers] = await Promise.all([listClusters(signal), listServers(undefined, signal)]);
    return { clusters, unassigned: servers.filter((s) => !s.clusterId).length, servers: servers.length };
  }, []);
  const { session } = useSession();
  return (
    <div className="page">
      <header className="view-head">
        <h1>Clusters</h1>
        <p className="muted">Hit rate today, memory needed for each cluster's target, and what it costs.</p>
      </header>
      {data.state === "loading" && <Loading what="clusters" />}
      {data.state === "error" && <ErrorState error={data.error} retry={data.reload} />}
      {data.state === "ready" && (
        <>
          {data.data.servers === 0 && <NoAgentYet />}
          {data.data.clusters.length > 0 && <ClusterCards clusters={data.data.clusters} />}
          {data.data.clusters.length === 0 && data.data.servers > 0 && (
            <p className="state empty">No clusters yet: create one and assign servers to it to see cluster-wide answers.</p>
          )}
          {data.data.unassigned > 0 && (
            <p className="muted">
              {data.data.unassigned} server{data.data.unassigned > 1 ? "s are" : " is"} in no cluster:{" "}
              <Link href="/servers">assign {data.data.unassigned > 1 ? "them" : "it"} on the Servers page</Link>.
            </p>
          )}
          {canWrite(session) && <NewCluster onDone={data.reload} />}
        </>
      )}
    </div>
  );
}

function ClusterCards({ clusters }: { clusters: ClusterSummary[] }) {
  return (
    <div className="cluster-grid" data-testid="clusters">
      {clusters.map((c) => {
        const ans = c.targetAnswer;
        // the answer's -m in all against today's limit, as the cluster page says it
        const needed = ans && c.neededBytes !== null ? neededTotal(ans) : c.neededBytes;
        const delta = ans ? limitDelta(ans) : null;
        const warm = ans ? warmupSentence(ans) : null;
        const unknown = ans && isUnknown(ans.status) ? ans.unknownUntil ?? "unknown until the agent has seen further" : null;
        const limit = ans && c.neededBytes !== null ? limitWords(ans) : null;
        const windowLine = ans && c.neededBytes !== null ? windowLimitWords(ans) : null;
        const against = ans ? memoryStateSentence(ans) : null;
        return (
          <article key={c.id} className="card cluster-card" data-cluster={c.id}>
            <header>
              <h2>
                <Link href={`/clusters/${c.id}`}>{c.name}</Link>
              </h2>
              <StatusBadge status={c.status} openAlerts={c.openAlerts} />
            </header>
            <dl className="kv">
              <div>
                <dt title={MEASURED_HIT_RATE_MEANS}>{MEASURED_HIT_RATE}</dt>
                <dd>
                  <span className="big">{c.measuredHitRatio === null ? "—" : formatHitRate(c.measuredHitRatio)}</span>
                  {c.targetHitRatio !== null && <span className="muted"> target {formatHitRate(c.targetHitRatio)}</span>}
                </dd>
              </div>
              <div>
                <dt>{keepFlags(ans ? limitLabel(ans) : MEMORY_LIMIT)}</dt>
                <dd data-testid="cluster-limit">
                  {ans ? limitAndUsed(ans) : "—"}
                  <span className="muted">
                    {" "}
                    · {c.serverCount} server{c.serverCount === 1 ? "" : "s"}
                  </span>
                </dd>
              </div>
              <div>
                <dt>Needed for target</dt>
                <dd data-testid="cluster-needed" data-status={ans?.status ?? ""}>
                  {unknown
                    ? `${unknown[0].toUpperCase()}${unknown.slice(1)}`
                    : needed !== null
                      ? formatBytes(needed)
                      : ans?.atLeastBytes != null
                        ? `more than ${formatBytes(ans.atLeastBytes)}`
                        : ans?.status === "unreachable"
                          ? "no memory size reaches it"
                          : c.neededUnreachable
                            ? "more than the curve covers"
                            : "not enough data"}
                  {!unknown && delta !== null && <span className={delta > 0 ? "delta up" : "delta down"}> {formatBytesDelta(delta)}</span>}
                  {!unknown && limit && <span className="muted"> · {keepFlags(limit)}</span>}
                  {!unknown && windowLine && <span className="muted small window-limit"> {keepFlags(windowLine)}</span>}
                </dd>
              </div>
              {against && (
                <div>
                  <dt>Today's -m</dt>
                  <dd data-testid="cluster-memory-state" data-state={ans?.memoryState ?? ""} className={`memory-state state-${ans?.memoryState}`}>
                    {keepFlags(against)}
                  </dd>
                </div>
              )}
              <div>
                <dt>Cost / month</dt>
                <dd>
                  {c.monthlyCostNow === null ? "—" : formatMoney(c.monthlyCostNow, c.currency)}
                  {c.monthlyCostAtTarget !== null && <> → {formatMoney(c.monthlyCostAtTarget, c.currency)} at target</>}
                </dd>
              </div>
            </dl>
            {warm && (
              <p className="warming" role="status" data-testid="cluster-warming">
                {warm}.
              </p>
            )}
            <footer>
              {c.openAlerts > 0 ? (
                <Link href="/alerts" className="alert-count">
                  {c.openAlerts} open alert{c.openAlerts > 1 ? "s" : ""}
                </Link>
              ) : (
                <span className="muted">No open alerts</span>
              )}
            </footer>
          </article>
        );
      })}
    </div>
  );
}

function NewCluster({ onDone }: { onDone: () => void }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [target, setTarget] = useState("90");
  const [price, setPrice] = useState("5");
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      await createCluster({ name, target_hit_ratio: Number(target) / 100, price_per_gb_month: Number(price) });
      setOpen(false);
      setName("");
      onDone();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        New cluster
      </button>
    );
  return (
    <form className="card inline-form" onSubmit={submit}>
      <h2>New cluster</h2>
      <label>
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
      </label>
      <label>
        Target hit rate (%)
        <input type="number" min={1} max={99.9} step={0.1} value={target} onChange={(e) => setTarget(e.target.value)} required />
      </label>
      <label>
        Price per GiB-month ($)
        <input type="number" min={0} step={0.01} value={price} onChange={(e) => setPrice(e.target.value)} required />
      </label>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <div className="row">
        <button type="submit" className="primary">
          Create
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
