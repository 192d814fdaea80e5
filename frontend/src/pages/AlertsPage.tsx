import { useState } from "react";
import { acknowledgeAlert, listAlerts } from "../api/endpoints";
import type { Alert } from "../api/types";
import { Link } from "../components/Link";
import { Empty, Fetched } from "../components/States";
import { useAsync } from "../hooks";
import { formatAge } from "../lib/format";
import { canWrite, useSession } from "../session";
import { NotificationChannels } from "./NotificationChannels";

export function AlertsPage() {
  const [showResolved, setShowResolved] = useState(false);
  const data = useAsync((signal) => listAlerts(showResolved ? "all" : "open", signal), [showResolved]);
  const { session } = useSession();
  return (
    <div className="page">
      <header className="view-head">
        <h1>Alerts</h1>
        <label className="check">
          <input type="checkbox" checked={showResolved} onChange={(e) => setShowResolved(e.target.checked)} /> Show resolved
        </label>
      </header>
      <Fetched result={data} what="alerts">
        {(alerts) => {
          const shown = alerts.filter((a) => showResolved || a.state === "open");
          return shown.length === 0 ? (
            <Empty title="No open alerts">
              <p>Alerts appear when a hit rate falls below its target, memory runs short, an agent goes silent or its curve drifts.</p>
            </Empty>
          ) : (
            <ul className="alerts" data-testid="alerts">
              {shown.map((a) => (
                <AlertItem key={a.id} alert={a} canAck={canWrite(session)} onAck={data.reload} />
              ))}
            </ul>
          );
        }}
      </Fetched>
      <NotificationChannels />
    </div>
  );
}

function AlertItem({ alert: a, canAck, onAck }: { alert: Alert; canAck: boolean; onAck: () => void }) {
  const subject = a.serverId ? `/servers/${a.serverId}` : a.clusterId ? `/clusters/${a.clusterId}` : null;
  return (
    <li className={`alert sev-${a.severity} ${a.state}`}>
      <span className={`badge sev-${a.severity}`}>{a.severity}</span>
      <div className="alert-body">
        <p>{a.message}</p>
        <p className="muted small">
          {a.kind.replace(/_/g, " ")} · since {formatAge(a.firstSeenAt)} · last {formatAge(a.lastSeenAt)}
          {a.state === "resolved" && <> · resolved {formatAge(a.resolvedAt)}</>}
          {a.acknowledgedAt && <> · acknowledged</>}
          {subject && (
            <>
              {" "}
              · <Link href={subject}>open</Link>
            </>
          )}
        </p>
      </div>
      {canAck && a.state === "open" && !a.acknowledgedAt && (
        <button type="button" onClick={() => acknowledgeAlert(a.id).then(onAck, (e: Error) => window.alert(e.message))}>
          Acknowledge
        </button>
      )}
    </li>
  );
}
