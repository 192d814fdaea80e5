// Where alerts go besides this page: per-organization notification channels (signed webhook,
// Slack, PagerDuty Events v2, Alertmanager) and the delivery log of every alert state change and
// test. Owners add, pause and remove channels; members send a test; everyone reads the log.
import { useState, type FormEvent } from "react";
import {
  createChannel,
  deleteChannel,
  listChannels,
  listDeliveries,
  sendOpenAlerts,
  sendTestNotification,
  setChannelEnabled,
  type ChannelDraft,
  type ChannelKind,
} from "../api/endpoints";
import { CopyBlock } from "../components/Copy";
import { ActionsTable, ChoiceField } from "../components/Forms";
import { PrivateTargets } from "../components/PrivateTargets";
import { Fetched, FormNotes } from "../components/States";
import { useAsync } from "../hooks";
import { formatAge } from "../lib/format";
import { canWrite, useSession } from "../session";
import { TableScroll } from "../components/TableScroll";

const KINDS: Array<[ChannelKind, string]> = [
  ["webhook", "Webhook (signed JSON)"],
  ["slack", "Slack incoming webhook"],
  ["pagerduty", "PagerDuty Events v2"],
  ["alertmanager", "Alertmanager webhook"],
];
const SEVERITIES = [
  ["info", "info"],
  ["warning", "warning"],
  ["critical", "critical"],
] as const;

export function NotificationChannels() {
  const { session } = useSession();
  const owner = session.orgs.find((o) => o.id === session.currentOrgId)?.role === "owner";
  const member = canWrite(session);
  const data = useAsync(async (signal) => {
    const [channels, deliveries] = await Promise.all([listChannels(signal), listDeliveries(signal)]);
    return { channels, deliveries };
  }, []);
  const [draft, setDraft] = useState<ChannelDraft>({ name: "", kind: "webhook", url: "", min_severity: "warning" });
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  // the channel just added: its secret (shown once) and the open alerts it can be sent
  const [created, setCreated] = useState<{ id: string; name: string; secret: string | null; openAlerts: number } | null>(null);
  const act = async (what: () => Promise<string | null>) => {
    setError(null);
    setNote(null);
    try {
      setNote(await what());
      data.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const body: ChannelDraft = { name: draft.name.trim(), kind: draft.kind, min_severity: draft.min_severity };
    if (draft.kind === "pagerduty") body.routing_key = draft.routing_key?.trim();
    else body.url = draft.url?.trim();
    void act(async () => {
      const { channel, secret, openAlerts } = await createChannel(body);
      setDraft({ ...draft, name: "", url: "", routing_key: "" });
      setCreated({ id: channel.id, name: channel.name, secret, openAlerts });
      return `Channel “${channel.name}” added.`;
    });
  };
  const sendOpen = (c: { id: string; name: string }) =>
    act(async () => {
      const n = await sendOpenAlerts(c.id);
      setCreated((x) => (x ? { ...x, openAlerts: 0 } : x));
      return `${n} open alert${n === 1 ? "" : "s"} queued for “${c.name}”: see the delivery log below.`;
    });
  const pd = draft.kind === "pagerduty";
  return (
    <section aria-labelledby="channels-title" className="channels">
      <h2 id="channels-title">Notification channels</h2>
      <p className="muted small">
        Each alert that opens or resolves is sent once to every channel enabled at that moment whose minimum severity it meets,
        retried with backoff when the receiver fails.
      </p>
      {owner && <PrivateTargets />}
      {owner && (
        <form className="row-form" onSubmit={submit} aria-label="Add a channel">
          <label>
            Name
            <input value={draft.name} onChange={(e) => setDraft({ ...draft, name: e.target.value })} required maxLength={100} />
          </label>
          <ChoiceField label="Kind" value={draft.kind} onChange={(k) => setDraft({ ...draft, kind: k as ChannelKind })} choices={KINDS} />
          {pd ? (
            <label>
              Routing key
              <input value={draft.routing_key ?? ""} onChange={(e) => setDraft({ ...draft, routing_key: e.target.value })} required autoComplete="off" />
            </label>
          ) : (
            <label>
              URL
              <input type="url" value={draft.url ?? ""} onChange={(e) => setDraft({ ...draft, url: e.target.value })} required placeholder="https://…" />
            </label>
          )}
          <ChoiceField
            label="Minimum severity"
            value={draft.min_severity}
            onChange={(v) => setDraft({ ...draft, min_severity: v })}
            choices={SEVERITIES}
          />
          <button type="submit" className="primary">
            Add channel
          </button>
        </form>
      )}
      <FormNotes ok={note} error={error} />
      {created && (created.secret || created.openAlerts > 0) && (
        <div className="card" data-testid="channel-created">
          {created.secret && (
            <>
              <p>
                The signing secret of “{created.name}”, shown only now: the receiver checks <code>X-Hitcurve-Signature</code> with it.
              </p>
              <CopyBlock text={created.secret} label={`Signing secret of ${created.name}`} testId="channel-secret" />
            </>
          )}
          {created.openAlerts > 0 && (
            <p>
              {created.openAlerts} alert{created.openAlerts === 1 ? " is" : "s are"} open now that this channel takes; their resolutions reach it
              either way.{" "}
              <button type="button" onClick={() => sendOpen(created)}>
                Send {created.openAlerts === 1 ? "it" : `the ${created.openAlerts}`} to “{created.name}”
              </button>
            </p>
          )}
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      <Fetched result={data} what="notification channels">
        {({ channels, deliveries }) => (
          <>
            {channels.length === 0 ? (
              <p className="state empty">No channels: alerts show only here and in the weekly e-mail.</p>
            ) : (
              <ActionsTable testId="channels" columns={["Channel", "Target", "Sends", "Last delivery"]}>
                    {channels.map((c) => (
                      <tr key={c.id} data-channel={c.name}>
                        <th scope="row">
                          {c.name}
                          <div className="muted small">
                            {KINDS.find(([k]) => k === c.kind)?.[1] ?? c.kind}
                            {c.signed && " · signed"}
                            {!c.enabled && " · paused"}
                          </div>
                        </th>
                        <td className="wrap-anywhere small">{c.kind === "pagerduty" ? `routing key …${c.routingKeyHint ?? ""}` : c.url}</td>
                        <td>{c.minSeverity} and above</td>
                        <td>{c.lastDeliveryStatus ? `${c.lastDeliveryStatus} ${formatAge(c.lastDeliveryAt)}` : "—"}</td>
                        <td className="actions">
                          {member && (
                            <button
                              type="button"
                              onClick={() =>
                                act(async () => {
                                  const d = await sendTestNotification(c.id);
                                  return `Test to “${c.name}”: ${d.status}${d.responseCode ? ` (HTTP ${d.responseCode})` : ""}${d.lastError ? ` — ${d.lastError}` : ""}`;
                                })
                              }
                            >
                              Send test
                            </button>
                          )}
                          {owner && (
                            <>
                              <button type="button" onClick={() => act(async () => (await setChannelEnabled(c.id, !c.enabled), null))}>
                                {c.enabled ? "Pause" : "Resume"}
                              </button>
                              <button
                                type="button"
                                className="danger"
                                aria-label={`Delete the channel ${c.name}`}
                                onClick={() => window.confirm(`Delete the channel “${c.name}” and its delivery log?`) && act(async () => (await deleteChannel(c.id), null))}
                              >
                                Delete
                              </button>
                            </>
                          )}
                        </td>
                      </tr>
                    ))}
              </ActionsTable>
            )}
            <h3>Delivery log</h3>
            {deliveries.length === 0 ? (
              <p className="state empty">Nothing sent yet.</p>
            ) : (
              <TableScroll>
                <table data-testid="deliveries">
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Channel</th>
                      <th scope="col">What</th>
                      <th scope="col">Status</th>
                      <th scope="col">Attempts</th>
                    </tr>
                  </thead>
                  <tbody>
                    {deliveries.map((d) => (
                      <tr key={d.id}>
                        <td>{formatAge(d.createdAt)}</td>
                        <td>{d.channelName}</td>
                        <td className="wrap-anywhere small">{d.event === "test" ? "test message" : `${d.event}: ${d.alertMessage ?? ""}`}</td>
                        <td className={d.status === "failed" ? "warn" : undefined}>
                          {d.status}
                          {d.responseCode !== null && ` · HTTP ${d.responseCode}`}
                          {d.lastError && <div className="muted small wrap-anywhere">{d.lastError}</div>}
                        </td>
                        <td>{d.attempts}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            )}
          </>
        )}
      </Fetched>
    </section>
  );
}
