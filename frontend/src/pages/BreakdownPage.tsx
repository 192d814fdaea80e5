import { useLayoutEffect, useMemo, useRef, useState } from "react";
import { getBreakdown } from "../api/endpoints";
import type { Breakdown, HotKeyRow, PrefixRow } from "../api/types";
import { drawMultiCurveChart, type Series } from "../charts/multiCurveChart";
import { Breadcrumbs, SubjectTabs } from "../components/Bits";
import { Link } from "../components/Link";
import { PoolSplitPanel } from "../components/PoolSplitPanel";
import { TtlWhatIfPanel } from "../components/TtlWhatIfPanel";
import { Empty, Fetched } from "../components/States";
import { useAsync, useDebounced, useWidth } from "../hooks";
import { formatBytes, formatPercent, formatHitRate, formatTime } from "../lib/format";
import { SeriesLegend } from "../components/SeriesLegend";
import { TableScroll } from "../components/TableScroll";

const int = (n: number) => n.toLocaleString("en-US");

/** What is in the cache: prefixes, TTL-aware memory, hot keys, expired vs evicted. */
export function BreakdownPage({ id }: { id: string }) {
  const [targetPct, setTargetPct] = useState(90);
  const target = useDebounced(targetPct, 300) / 100;
  const b = useAsync((signal) => getBreakdown(id, target, signal), [id, target]);
  return (
    <div className="page breakdown-page">
      <Breadcrumbs items={[["Servers", "/servers"], ["Breakdown", null]]} />
      <SubjectTabs kind="server" id={id} />
      <header className="view-head">
        <h1>What is in the cache</h1>
        <p className="muted">
          Key prefixes, memory with expiry modelled, hot keys and how items left, from the newest good window of the agent (a loss-flagged or quiet one never stands for the server).
        </p>
      </header>
      <label className="inline-field">
        Hit rate target{" "}
        <input
          type="number"
          min={50}
          max={99}
          step={1}
          value={targetPct}
          aria-label="Hit rate target in percent"
          onChange={(e) => setTargetPct(Math.min(99, Math.max(50, Number(e.target.value) || 90)))}
        />{" "}
        %
      </label>
      <Fetched result={b} what="breakdown">
        {(d) =>
          d === null ? (
            <Empty title="No breakdown from this server's agent">
              <p>Current agents send it by default (`--breakdown 1`); this agent is older or runs without it.</p>
            </Empty>
          ) : (
            <BreakdownView id={id} d={d} />
          )
        }
      </Fetched>
    </div>
  );
}

function BreakdownView({ id, d }: { id: string; d: Breakdown }) {
  const pct = formatHitRate(d.target);
  return (
    <>
      <p className="muted small" data-testid="breakdown-window">
        Window ending {formatTime(new Date(d.windowEnd))} · prefix rule: {d.prefixRule ?? "—"}
      </p>
      {d.windowsNote && (
        <p className="muted small" data-testid="breakdown-windows-note">
          The newest good window ({d.windowsNote}).
        </p>
      )}
      <p className="muted small" data-testid="memory-answers">
        The memory to set for {pct} is the server&apos;s answer, on its{" "}
        <Link href={`/servers/${encodeURIComponent(id)}`}>curve page</Link> (memcached&apos;s curve calibrated to its
        measured hit rate). The figures below answer other questions: what each prefix would need in a pool of its
        own, and what expiry saves on the agent&apos;s uncalibrated curve.
      </p>
      <section className="card" data-testid="prefix-table">
        <h2>Prefixes</h2>
        <p className="muted small">
          Alone, for {pct}: what each prefix would need in a pool of its own (its own curve with expiry modelled).
          Memory held: {d.memoryRule}.
        </p>
        <TableScroll>
          <table>
            <thead>
              <tr>
                <th>Prefix</th>
                <th className="num">Requests</th>
                <th className="num">Hit rate</th>
                <th className="num">Memory held</th>
                <th className="num">Alone, for {pct}</th>
                <th className="num">Expired</th>
                <th className="num">Evicted</th>
              </tr>
            </thead>
            <tbody>
              {d.prefixes.map((p) => (
                <PrefixTr key={p.prefix + p.other} p={p} />
              ))}
            </tbody>
            <tfoot>
              <tr data-testid="prefix-total">
                <th scope="row">All keys</th>
                <td className="num">{int(d.prefixes.reduce((s, p) => s + p.requests, 0))}</td>
                <td />
                <td className="num">
                  {formatBytes(d.prefixes.reduce((s, p) => s + p.bytes, 0))}
                  {d.storedBytes != null && <span className="muted small"> of {formatBytes(d.storedBytes)} stored</span>}
                </td>
                <td className="num">
                  {d.prefixesAloneBytes == null ? "—" : formatBytes(d.prefixesAloneBytes)}
                  <span className="muted small"> in separate pools</span>
                </td>
                <td colSpan={2} />
              </tr>
            </tfoot>
          </table>
        </TableScroll>
      </section>
      <PoolSplitPanel id={id} prefixes={d.prefixes} />
      <TtlWhatIfPanel id={id} prefixes={d.prefixes} />
      {d.ttl && <TtlPanel d={d} />}
      <section className="card" data-testid="hot-keys">
        <h2>Hot keys</h2>
        <p className="muted small">
          {d.hotKeysHashed
            ? "Keys are hashed (XXH3-64) by the agent; run it with --hot-keys-clear 1 to see them in clear."
            : "Keys in clear, as the agent was told to send them."}{" "}
          Counts are estimates within the ± shown (a space-saving sketch with randomized admission).
        </p>
        <div className="two-col">
          <HotTable title="By requests" rows={d.hotKeys} />
          <HotTable title="By requests × size" rows={d.hotKeysByBytes} />
        </div>
      </section>
      <section className="card" data-testid="left-table">
        <h2>Expired vs evicted</h2>
        <p className="muted small">
          Items that left in the window: {int(d.left.expired)} expired, {int(d.left.evicted)} evicted
          {d.evictedByPageMoves > 0 ? ` (${int(d.evictedByPageMoves)} of them by slab page moves)` : ""},{" "}
          {int(d.left.deleted)} deleted. Many evictions next to few expiries mean the cache is short of memory; many
          expiries mean TTLs, not memory, decide what stays. Page-move evictions are memcached moving a class&apos;s
          memory to another class whose items need it, not a shortage; they are counted as evictions from memcached
          1.6.34 on.
        </p>
        <TableScroll>
          <table>
            <thead>
              <tr>
                <th>Class</th>
                <th className="num">Chunk</th>
                <th className="num">Expired</th>
                <th className="num">Evicted</th>
                <th className="num" title="of the evictions, those slab page moves caused">Page moves</th>
                <th className="num">Deleted</th>
              </tr>
            </thead>
            <tbody>
              {d.classes.map((c) => (
                <tr key={c.id}>
                  <td>{c.id}</td>
                  <td className="num">{formatBytes(c.chunkSize)}</td>
                  <td className="num">{int(c.expired)}</td>
                  <td className="num">{int(c.evicted)}</td>
                  <td className="num">{int(c.evictedByPageMoves)}</td>
                  <td className="num">{int(c.deleted)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </section>
    </>
  );
}

function PrefixTr({ p }: { p: PrefixRow }) {
  const need =
    p.memoryForTarget == null
      ? p.other
        ? "—"
        : "more than the curve shows"
      : p.curveStep != null && p.memoryForTarget <= p.curveStep
        ? `≤ ${formatBytes(p.curveStep)}`
        : formatBytes(p.memoryForTarget);
  return (
    <tr className={p.other ? "muted" : undefined}>
      <td>
        <code>{p.other ? "(others)" : p.prefix}</code>
      </td>
      <td className="num">
        {int(p.requests)} <span className="muted small">({formatPercent(p.requestShare, 1)})</span>
      </td>
      <td className="num">{p.hitRatio == null ? "—" : formatHitRate(p.hitRatio)}</td>
      <td className="num">
        {formatBytes(p.bytes)} {p.memoryShare != null && <span className="muted small">({formatPercent(p.memoryShare, 0)})</span>}
      </td>
      <td className="num">{need}</td>
      <td className="num">{p.left ? int(p.left.expired) : "—"}</td>
      <td className="num">{p.left ? int(p.left.evicted) : "—"}</td>
    </tr>
  );
}

function TtlPanel({ d }: { d: Breakdown }) {
  const t = d.ttl!;
  const [box, width] = useWidth<HTMLDivElement>();
  const svg = useRef<SVGSVGElement>(null);
  const series: Series[] = useMemo(
    () => [
      { key: "aware", label: "Expiry modelled (TTL-aware)", color: "#1f77b4", points: t.aware },
      { key: "obl", label: "Expiry ignored", color: "#999", points: t.oblivious, dashed: true },
    ],
    [t],
  );
  useLayoutEffect(() => {
    if (!width) return;
    drawMultiCurveChart(svg.current!, series, {
      width,
      height: width < 520 ? 220 : 280,
      margin: { top: 16, right: 16, bottom: 40, left: 48 },
      currentBytes: null,
    });
  });
  const pct = formatHitRate(d.target);
  return (
    <section className="card" data-testid="ttl-panel" ref={box}>
      <h2>What expiry saves</h2>
      <p>
        On the agent&apos;s merged curve before calibration (not the memory to set: that is the curve page&apos;s), for{" "}
        {pct}:{" "}
        <strong>{t.memoryForTarget == null ? "more than the curve shows" : formatBytes(t.memoryForTarget)}</strong> with
        items leaving at their TTL, against{" "}
        {t.memoryForTargetOblivious == null ? "more than the curve shows" : formatBytes(t.memoryForTargetOblivious)} if
        expiry is ignored
        {t.savedRatio != null && <> — expiry saves {formatPercent(t.savedRatio, 0)}</>}. Working set{" "}
        {formatBytes(t.workingSet)} (ignoring expiry {formatBytes(t.workingSetOblivious)}).
      </p>
      <SeriesLegend series={series} />
      <div className="chart">
        <svg ref={svg} role="img" aria-label="Hit rate versus memory with and without expiry" />
      </div>
      <p className="muted small">
        Not visible to the agent: {t.gaps}; nor the memory expired items hold until memcached reclaims them (its LRU
        crawler frees them without a trace in the watch stream, so that memory cannot be measured here).
      </p>
    </section>
  );
}

function HotTable({ title, rows }: { title: string; rows: HotKeyRow[] }) {
  return (
    <div>
      <h3>{title}</h3>
      <TableScroll>
        <table>
          <thead>
            <tr>
              <th>Key</th>
              <th className="num">Requests</th>
              <th className="num">Size</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((h) => (
              <tr key={h.key}>
                <td className="key-cell">
                  <code title={h.key}>{h.key}</code>
                </td>
                <td className="num">
                  {int(h.requests)}
                  {h.error > 0 && <span className="muted small"> ±{int(h.error)}</span>}
                </td>
                <td className="num">{h.bytes ? formatBytes(h.bytes) : "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </div>
  );
}
