import type { ServerSummary } from "../api/types";
import { MEASURED_HIT_RATE, MEASURED_HIT_RATE_MEANS, MEMORY_LIMIT, formatAge, formatBytes, formatHitRate, formatPercent } from "../lib/format";
import { StatsOnlyLabel, StatusBadge } from "./Bits";
import { Link } from "./Link";
import { TableScroll } from "./TableScroll";
import { keepFlags } from "./TargetAnswer";

/** Servers with their agent's health: last seen, event loss, curve error. */
export function ServerTable({
  servers,
  clusters,
  onAssign,
}: {
  servers: ServerSummary[];
  clusters?: Array<{ id: string; name: string }>;
  onAssign?: (serverId: string, clusterId: string | null) => void;
}) {
  return (
    <TableScroll label="servers">
      <table className="servers" data-testid="servers">
        <thead>
          <tr>
            <th scope="col">Server</th>
            <th scope="col">Status</th>
            <th scope="col" title={MEASURED_HIT_RATE_MEANS}>
              {MEASURED_HIT_RATE}
            </th>
            <th scope="col">{keepFlags(MEMORY_LIMIT)}</th>
            <th scope="col">Last seen</th>
            <th scope="col">Event loss</th>
            <th scope="col">Curve error</th>
            <th scope="col">Versions</th>
            {clusters && <th scope="col">Cluster</th>}
          </tr>
        </thead>
        <tbody>
          {servers.map((s) => (
            <tr key={s.id} data-server={s.id}>
              <th scope="row">
                <Link href={`/servers/${s.id}`}>{s.address}</Link>
                <StatsOnlyLabel basis={s.dataBasis} compact />
                {s.hostname && <div className="muted small">{s.hostname}</div>}
              </th>
              <td>
                <StatusBadge status={s.status} />
                {s.statusNote && <div className="muted small">{s.statusNote}</div>}
              </td>
              <td>{s.measuredHitRatio === null ? "—" : formatHitRate(s.measuredHitRatio)}</td>
              <td>{s.limitBytes === null ? "—" : formatBytes(s.limitBytes)}</td>
              <td title={s.lastSeen ?? undefined}>{formatAge(s.lastSeen)}</td>
              <td className={s.lossWarning ? "warn" : undefined}>
                {s.lossRatio === null ? "—" : formatPercent(s.lossRatio, 2)}
              </td>
              <td className={s.curveErrorWarning ? "warn" : undefined}>
                {s.curveError === null ? "—" : `±${s.curveError.toFixed(1)}\u00a0pp`}
              </td>
              <td className="small">
                memcached {s.version ?? "?"}
                <div className="muted">agent {s.agentVersion ?? "?"}</div>
              </td>
              {clusters && (
                <td>
                  {onAssign ? (
                    <select
                      aria-label={`Cluster of ${s.address}`}
                      value={s.clusterId ?? ""}
                      onChange={(e) => onAssign(s.id, e.target.value || null)}
                    >
                      <option value="">(none)</option>
                      {clusters.map((c) => (
                        <option key={c.id} value={c.id}>
                          {c.name}
                        </option>
                      ))}
                    </select>
                  ) : (
                    (s.clusterName ?? "—")
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
