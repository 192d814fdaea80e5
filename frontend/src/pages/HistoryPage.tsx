import * as d3 from "d3";
import { useLayoutEffect, useMemo, useRef, useState } from "react";
import { getHistory } from "../api/endpoints";
import type { History } from "../api/types";
import { drawAccuracyChart } from "../charts/accuracyChart";
import { drawMultiCurveChart, type Series } from "../charts/multiCurveChart";
import { Breadcrumbs, SubjectTabs } from "../components/Bits";
import { Empty, Fetched } from "../components/States";
import { useAsync, useWidth } from "../hooks";
import { formatDuration, formatPercent, formatTime } from "../lib/format";

export function HistoryPage({ kind, id }: { kind: "server" | "cluster"; id: string }) {
  const [hours, setHours] = useState(168);
  const data = useAsync((signal) => getHistory(kind, id, hours, signal), [kind, id, hours]);
  return (
    <div className="page">
      <Breadcrumbs items={kind === "server" ? [["Servers", "/servers"], ["History", null]] : [["Clusters", "/"], ["History", null]]} />
      <SubjectTabs kind={kind} id={id} />
      <header className="view-head">
        <h1>History</h1>
        <label>
          Period{" "}
          <select value={hours} onChange={(e) => setHours(Number(e.target.value))} data-testid="history-period">
            <option value={1}>1 hour</option>
            <option value={6}>6 hours</option>
            <option value={24}>1 day</option>
            <option value={168}>7 days</option>
          </select>
        </label>
      </header>
      <Fetched result={data} what="history">
        {(h) =>
          h.accuracy.length === 0 && h.measured.length === 0 && !h.curves.length ? (
            <Empty title="No history yet">
              <p>History builds up as the agent uploads a snapshot every minute; come back in a little while.</p>
            </Empty>
          ) : (
            <HistoryBody history={h} />
          )
        }
      </Fetched>
    </div>
  );
}

const pp = (v: number) => `${v.toFixed(2)}\u00a0pp`;

function HistoryBody({ history }: { history: History }) {
  const [box, width] = useWidth<HTMLDivElement>();
  const acc = useRef<SVGSVGElement>(null);
  const curves = useRef<SVGSVGElement>(null);
  // The accuracy record when there is one; otherwise measured versus the curve's own prediction.
  const rows = history.accuracy.length ? history.accuracy : history.measured;
  const accuracy = useMemo(() => rows.map((a) => ({ time: new Date(a.time), measured: a.measured, predicted: a.predicted })), [rows]);
  const series: Series[] = useMemo(() => {
    const list = history.curves;
    const n = list.length;
    return list.map((c, i) => ({
      key: c.time,
      label: formatTime(new Date(c.time)),
      color: d3.interpolateViridis(n > 1 ? 0.15 + (0.7 * i) / (n - 1) : 0.5),
      points: c.points,
      opacity: n > 1 ? 0.35 + (0.65 * i) / (n - 1) : 1,
    }));
  }, [history]);
  useLayoutEffect(() => {
    if (!width) return;
    if (acc.current && accuracy.length)
      drawAccuracyChart(acc.current, accuracy, { width, height: width < 520 ? 280 : 320, margin: { top: 24, right: 16, bottom: 28, left: 62 } });
    if (curves.current && series.length)
      drawMultiCurveChart(curves.current, series, { width, height: 300, margin: { top: 16, right: 16, bottom: 40, left: 48 }, currentBytes: null });
  });
  const loss = history.measured.filter((m) => m.lossRatio !== null).map((m) => m.lossRatio!);
  return (
    <div ref={box}>
      <section aria-labelledby="acc-title">
        <h2 id="acc-title">Measured versus predicted</h2>
        {accuracy.length ? (
          <>
            <p data-testid="accuracy-summary">
              {history.meanAbsErrorPp !== null ? (
                <>
                  The curve's predictions were off by {pp(history.meanAbsErrorPp)} on average
                  {history.maxAbsErrorPp !== null && <>, at worst {pp(history.maxAbsErrorPp)}</>}.
                </>
              ) : (
                <>No accuracy record yet (it needs an earlier curve to compare against): showing measured hit rate and the curve's value at today's memory.</>
              )}
              {loss.length > 0 && <> Watch-stream event loss averaged {formatPercent(d3.mean(loss)!, 2)}.</>}
            </p>
            {history.bucketSeconds !== null && (
              <p className="muted small" data-testid="history-points-note">
                One point per {Math.abs(history.bucketSeconds - 60) < 1 ? "minute" : formatDuration(history.bucketSeconds)}, drawn at its
                newest window.
              </p>
            )}
            <div className="chart">
              <svg ref={acc} role="img" aria-label="Measured and predicted hit rate over time, and the error" data-testid="accuracy-chart" />
            </div>
          </>
        ) : (
          <p className="muted">No measurements in this period.</p>
        )}
      </section>
      <section aria-labelledby="curves-title">
        <h2 id="curves-title">How the curve moved</h2>
        {series.length ? (
          <>
            <p className="muted" data-testid="history-curves-legend">
              {series.length === 1 ? (
                <>One curve, from {series[0].label}.</>
              ) : (
                <>
                  {series.length} curves from {series[0].label} to {series[series.length - 1].label}, one per period, older ones
                  lighter.
                </>
              )}
            </p>
            <div className="chart">
              <svg ref={curves} role="img" aria-label="Curves over time" data-testid="history-curves" />
            </div>
          </>
        ) : (
          <p className="muted">No curves in this period.</p>
        )}
      </section>
    </div>
  );
}
