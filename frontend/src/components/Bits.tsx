import type { DataBasis, Status } from "../api/types";
import { useLocation } from "../router";
import { Link } from "./Link";

const STATUS_TEXT: Record<Status, string> = { ok: "OK", warning: "Warning", critical: "Critical", no_data: "No data", warming_up: "Warming up" };

/** The status badge. A cluster warns for an open alert or for a measured hit rate below its target
 * (rules/status.py cluster_status); with no alert open, it says which, so that it is not read as an
 * alert beside "No open alerts". */
export function StatusBadge({ status, openAlerts }: { status: Status; openAlerts?: number }) {
  const text = status === "warning" && openAlerts === 0 ? "Below target" : STATUS_TEXT[status];
  return <span className={`badge status-${status}`}>{text}</span>;
}

/** Curve / History / Policies tabs for one server or cluster. */
export function SubjectTabs({ kind, id }: { kind: "server" | "cluster"; id: string }) {
  const location = useLocation().split("?")[0];
  const base = `/${kind}s/${encodeURIComponent(id)}`;
  const tabs: Array<[string, string]> = [
    [base, "Curve"],
    [`${base}/history`, "History"],
    [`${base}/policies`, "Policies"],
    ...(kind === "server" ? ([[`${base}/breakdown`, "Breakdown"]] as Array<[string, string]>) : []),
  ];
  return (
    <nav className="tabs" aria-label={`${kind} views`}>
      {tabs.map(([href, label]) => (
        <Link key={href} href={href} aria-current={location === href ? "page" : undefined}>
          {label}
        </Link>
      ))}
    </nav>
  );
}

export function Breadcrumbs({ items }: { items: Array<[string, string | null]> }) {
  return (
    <nav className="crumbs" aria-label="Breadcrumb">
      {items.map(([label, href], i) => (
        <span key={i}>
          {href ? <Link href={href}>{label}</Link> : <span aria-current="page">{label}</span>}
          {i < items.length - 1 && <span aria-hidden="true"> / </span>}
        </span>
      ))}
    </nav>
  );
}

/** How a curve that rests on `stats` alone is named everywhere (the API's message says the same). */
export const STATS_ONLY_LABEL = "estimated from stats only";

/** A stats-only server or curve says so: memcached refused `watch`, so the curve is a
 * model fitted to memcached's counters, not measured reuse, and its band is wider. */
export function StatsOnlyLabel({ basis, compact = false }: { basis: DataBasis | null; compact?: boolean }) {
  if (basis !== "stats_only" && basis !== "mixed") return null;
  if (compact)
    return (
      <span className="badge basis-stats-only" data-testid="stats-only-badge" title={`${STATS_ONLY_LABEL}: memcached refused watch`}>
        stats only
      </span>
    );
  const who = basis === "mixed" ? "Some servers' curves are" : "This curve is";
  return (
    <p className="stats-only-label" role="note" data-testid="stats-only-label">
      <strong>{basis === "mixed" ? `Partly ${STATS_ONLY_LABEL}` : `${STATS_ONLY_LABEL[0].toUpperCase()}${STATS_ONLY_LABEL.slice(1)}`}</strong> —{" "}
      memcached refused <code>watch</code>, so the agent sees no individual reads. {who} a model (Che&apos;s
      approximation, Zipf popularity) fitted to memcached&apos;s <code>stats</code> counters: it matches today&apos;s hit
      rate, but away from today&apos;s memory it is a guess, and the band around it is wider.
    </p>
  );
}
