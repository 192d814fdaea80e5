import type { Status } from "../api/types";
import { useLocation } from "../router";
import { Link } from "./Link";

const STATUS_TEXT: Record<Status, string> = { ok: "OK", warning: "Warning", critical: "Critical", no_data: "No data" };

export function StatusBadge({ status }: { status: Status }) {
  return <span className={`badge status-${status}`}>{STATUS_TEXT[status]}</span>;
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
