import { useState, type FormEvent } from "react";
import {
  createSubscription,
  deleteSubscription,
  listClusterRows,
  listSubscriptions,
  previewReport,
  resendConfirmation,
  sendTestReport,
  type ReportPreview,
} from "../api/endpoints";
import type { ReportSubscription } from "../api/types";
import { ActionsTable, ChoiceField } from "../components/Forms";
import { keepFlags } from "../components/TargetAnswer";
import { Fetched, FormNotes } from "../components/States";
import { useAsync } from "../hooks";
import { formatAge } from "../lib/format";
import { canWrite, useSession } from "../session";

const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const ALL = ["", "all clusters"] as const;
const clusterChoices = (clusters: Array<{ id: string; name: string }>) => clusters.map((c) => [c.id, c.name] as const);

export function ReportsPage() {
  const data = useAsync(async (signal) => {
    const [subs, clusters] = await Promise.all([listSubscriptions(signal), listClusterRows(signal)]);
    return { subs, clusters };
  }, []);
  const { session } = useSession();
  const [email, setEmail] = useState(session.user.email);
  const [cluster, setCluster] = useState("");
  const [weekday, setWeekday] = useState(0);
  const [hour, setHour] = useState(8);
  const [error, setError] = useState<string | null>(null);
  const [ok, setOk] = useState<string | null>(null);
  const add = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setOk(null);
    try {
      const made = await createSubscription({ email, cluster_id: cluster || null, weekday, hour_utc: hour });
      if (!made.confirmedAt) setOk(`a confirmation mail is on its way to ${made.email}: no report is sent until its link is followed`);
      data.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const resend = async (s: ReportSubscription) => {
    setError(null);
    setOk(null);
    try {
      await resendConfirmation(s.id);
      setOk(`the confirmation mail went to ${s.email} again`);
      data.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <div className="page">
      <header className="view-head">
        <h1>Weekly reports</h1>
        <p className="muted">
          {/* "(-m)" on one line: at 390 px it broke after the hyphen ("(-" / "m)") */}
          {keepFlags("An e-mail each week: hit rates, the memory limit (-m) for each target with its curve, cost, savings and open alerts.")}
        </p>
      </header>
      <Fetched result={data} what="report subscriptions">
        {({ subs, clusters }) => (
          <>
            {canWrite(session) && (
              <form className="row-form" onSubmit={add}>
                <label>
                  E-mail
                  <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
                </label>
                <ChoiceField label="About" value={cluster} onChange={setCluster} choices={clusterChoices(clusters)} first={ALL} />
                <ChoiceField label="Day" value={String(weekday)} onChange={(d) => setWeekday(Number(d))} choices={DAYS.map((d, i) => [String(i), d] as const)} />
                <label>
                  Hour (UTC)
                  <input type="number" min={0} max={23} value={hour} onChange={(e) => setHour(Number(e.target.value))} />
                </label>
                <button type="submit" className="primary">
                  Subscribe
                </button>
              </form>
            )}
            <FormNotes ok={ok} error={error} />
            {subs.length === 0 ? (
              <p className="state empty">No report subscriptions yet.</p>
            ) : (
              <ActionsTable testId="subscriptions" columns={["E-mail", "About", "When", "Recipient", "Last sent"]}>
                    {subs.map((s) => (
                      <tr key={s.id}>
                        <td>{s.email}</td>
                        <td>{s.clusterId ? (clusters.find((c) => c.id === s.clusterId)?.name ?? "a cluster") : "all clusters"}</td>
                        <td>
                          {DAYS[s.weekday]} {String(s.hourUtc).padStart(2, "0")}:00 UTC{!s.enabled && " (paused)"}
                        </td>
                        <td data-testid="recipient-state">
                          {s.confirmedAt ? (
                            <span className="badge recipient-confirmed">confirmed</span>
                          ) : (
                            <>
                              <span className="badge recipient-pending">pending</span>{" "}
                              <span className="muted">mailed {formatAge(s.confirmationSentAt)}; nothing is sent until the recipient confirms</span>
                            </>
                          )}
                        </td>
                        <td>{formatAge(s.lastSentAt)}</td>
                        <td>
                          {canWrite(session) && !s.confirmedAt && (
                            <button type="button" onClick={() => resend(s)}>
                              Resend confirmation
                            </button>
                          )}{" "}
                          {canWrite(session) && (
                            <button type="button" className="danger" onClick={() => deleteSubscription(s.id).then(data.reload, (e: Error) => setError(e.message))}>
                              Unsubscribe
                            </button>
                          )}
                        </td>
                      </tr>
                    ))}
              </ActionsTable>
            )}
            <PreviewSection clusters={clusters} />
          </>
        )}
      </Fetched>
    </div>
  );
}

/** The e-mail as it would go to you now, and a test copy to your own address (the organization is
 * the one you are in: nothing to type). */
function PreviewSection({ clusters }: { clusters: Array<{ id: string; name: string }> }) {
  const { session } = useSession();
  const [about, setAbout] = useState("");
  const [preview, setPreview] = useState<ReportPreview | null>(null);
  const [busy, setBusy] = useState<"preview" | "test" | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (what: "preview" | "test") => {
    setBusy(what);
    setError(null);
    setSent(null);
    try {
      if (what === "preview") setPreview(await previewReport(about || null));
      else setSent(await sendTestReport(about || null));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(null);
    }
  };
  return (
    <section className="report-preview" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview and test</h2>
      <p className="muted">See the e-mail as it would be sent now, or send a copy marked as a test to {session.user.email}.</p>
      <div className="row-form">
        <ChoiceField label="Report about" value={about} onChange={setAbout} choices={clusterChoices(clusters)} first={ALL} testId="preview-about" />
        <button type="button" onClick={() => run("preview")} disabled={busy !== null}>
          {busy === "preview" ? "…" : "Preview"}
        </button>
        <button type="button" className="primary" onClick={() => run("test")} disabled={busy !== null}>
          {busy === "test" ? "…" : "Send me a test"}
        </button>
      </div>
      <FormNotes ok={sent} error={error} />
      {preview && (
        <figure className="mail-preview">
          <figcaption>
            <span>
              <strong>Subject:</strong> {preview.subject}
            </span>
            <span>
              <strong>To:</strong> {preview.to}
              {!preview.subscribed && " (not subscribed to this report: no unsubscribe link)"}
            </span>
          </figcaption>
          {/* sandboxed: the e-mail's HTML runs no script and cannot navigate this page (same origin
              only so the browser renders it in-process; without scripts nothing can use that) */}
          <iframe title="E-mail preview" sandbox="allow-same-origin" srcDoc={preview.html} data-testid="mail-preview" />
        </figure>
      )}
    </section>
  );
}
