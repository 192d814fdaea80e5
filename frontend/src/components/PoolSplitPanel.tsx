import { useLayoutEffect, useMemo, useRef, useState } from "react";
import { ApiError } from "../api/client";
import { getPoolSplit } from "../api/endpoints";
import type { PoolSplit, PrefixRow, SplitPoint } from "../api/types";
import { drawMultiCurveChart, type Series } from "../charts/multiCurveChart";
import { useAsync, useDebounced, useWidth } from "../hooks";
import { formatBytes, formatPercent, formatHitRate } from "../lib/format";
import { Fetched } from "./States";
import { SeriesLegend } from "./SeriesLegend";

// A gain below this is within the curves' own error: one pool is as good.
const WIN_PP = 0.5;

/** The backend's answers for a window with nothing to split (one prefix carries (almost) every
 * read, or the chosen one has too few): said quietly, not as an error. */
const NOTHING_TO_SPLIT = new Set(["no_rest", "too_few_reads"]);

export function nothingToSplit(e: Error | undefined): string | null {
  if (!(e instanceof ApiError) || e.status !== 422) return null;
  const d = e.detail as { code?: string; detail?: Array<{ msg?: string }> } | undefined;
  return d?.code && NOTHING_TO_SPLIT.has(d.code) ? (d.detail?.[0]?.msg ?? e.message) : null;
}

/** The pool-split what-if: the chosen prefix alone in X, every other key in the rest of
 * today's memory, against today's single pool; the model is the backend's (hitcurve/breakdown/poolsplit.py). */
export function PoolSplitPanel({ id, prefixes }: { id: string; prefixes: PrefixRow[] }) {
  const names = prefixes.filter((p) => !p.other && p.curveStep != null).map((p) => p.prefix);
  const [prefix, setPrefix] = useState(names[0] ?? "");
  // the prefix's pool as a share of the total; null = not chosen yet (best and today's shown)
  const [sharePct, setSharePct] = useState<number | null>(null);
  const share = useDebounced(sharePct, 300);
  const total = useRef<number | null>(null);
  const s = useAsync(
    (signal) => getPoolSplit(id, prefix, share == null || total.current == null ? null : (share / 100) * total.current, signal),
    [id, prefix, share],
  );
  if (s.state === "ready") total.current = s.data!.totalBytes;
  if (!names.length) return null;
  return (
    <section className="card" data-testid="pool-split">
      <h2>Give a prefix its own pool</h2>
      <p className="muted small">
        The prefix alone in a pool of its own (its own curve), every other key in a second pool, the two together in
        today&apos;s memory, against today&apos;s single pool. Separate pools tend to win when item sizes differ.
      </p>
      <div className="split-controls">
        <label>
          Prefix{" "}
          <select
            value={prefix}
            aria-label="Prefix to give its own pool"
            onChange={(e) => {
              setPrefix(e.target.value);
              setSharePct(null);
            }}
          >
            {names.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>{" "}
        <label>
          its pool{" "}
          <input
            type="range"
            min={1}
            max={99}
            step={1}
            value={sharePct ?? 50}
            aria-label="Share of the memory for the prefix's pool, percent"
            onChange={(e) => setSharePct(Number(e.target.value))}
          />{" "}
          {sharePct == null ? "—" : `${sharePct} %`}
        </label>
      </div>
      {s.state === "error" && nothingToSplit(s.error) ? (
        <p className="muted" data-testid="split-nothing">
          Nothing to split in this window: {nothingToSplit(s.error)}.
        </p>
      ) : (
        <Fetched result={s} what="pool split">
          {(d) => <SplitView d={d} />}
        </Fetched>
      )}
    </section>
  );
}

function Pools({ p, name }: { p: SplitPoint; name: string }) {
  return (
    <>
      <code>{name}</code> alone in {formatBytes(p.prefixBytes)} ({formatHitRate(p.prefixHit)}) and the rest in{" "}
      {formatBytes(p.restBytes)} ({formatHitRate(p.restHit)}): <strong>{formatHitRate(p.hit)}</strong>
    </>
  );
}

function SplitView({ d }: { d: PoolSplit }) {
  const [box, width] = useWidth<HTMLDivElement>();
  const svg = useRef<SVGSVGElement>(null);
  const series: Series[] = useMemo(
    () => [
      {
        key: "split",
        label: `Two pools, by the size of ${d.prefix}'s`,
        color: "#1f77b4",
        raw: true,
        points: d.points.map((p) => ({ bytes: p.prefixBytes, hit: p.hit })),
      },
      {
        key: "pool",
        label: "One pool (today)",
        color: "#999",
        dashed: true,
        points: [
          { bytes: d.points[0]?.prefixBytes ?? 0, hit: d.pooledHit },
          { bytes: d.totalBytes, hit: d.pooledHit },
        ],
      },
    ],
    [d],
  );
  useLayoutEffect(() => {
    if (!width) return;
    drawMultiCurveChart(svg.current!, series, {
      width,
      height: width < 520 ? 220 : 280,
      margin: { top: 16, right: 16, bottom: 40, left: 48 },
      currentBytes: d.today.prefixBytes,
      currentLabel: "holds today",
      xTitle: `memory of ${d.prefix}'s pool`,
    });
  });
  const wins = d.gainPp > WIN_PP;
  return (
    <div ref={box}>
      <p>
        Today one pool of {formatBytes(d.totalBytes)}: <strong>{formatHitRate(d.pooledHit)}</strong>
        {d.measuredHit != null && <> (memcached measured {formatHitRate(d.measuredHit)})</>}. <code>{d.prefix}</code> takes{" "}
        {formatPercent(d.requestShare, 0)} of the reads and holds {formatPercent(d.occupancyShare, 0)} of the memory.
      </p>
      <p data-testid="split-best">
        {wins ? "A separate pool wins. " : `One pool is as good (a split gains at most ${d.gainPp.toFixed(1)} pp). `}
        Best split: <Pools p={d.best} name={d.prefix} />, {d.gainPp >= 0 ? "+" : ""}
        {d.gainPp.toFixed(1)} pp against one pool.
      </p>
      {d.chosen && (
        <p data-testid="split-chosen">
          Your split: <Pools p={d.chosen} name={d.prefix} />.
        </p>
      )}
      <SeriesLegend series={series} />
      <div className="chart">
        <svg ref={svg} role="img" aria-label={`Hit rate of two pools by the memory of ${d.prefix}'s pool`} />
      </div>
      {d.check.passed === false ? (
        <p className="warning-note" role="status" data-testid="split-check">
          Not to be trusted for this window: {d.prefix}&apos;s own curve at the memory it holds today is{" "}
          {d.check.diffPp!.toFixed(1)} pp from its measured hit rate (tolerance {d.check.tolerancePp} pp).
        </p>
      ) : (
        <p className="muted small" data-testid="split-check">
          Check: {d.prefix}&apos;s own curve at the memory it holds today is{" "}
          {d.check.diffPp == null ? "—" : `${d.check.diffPp >= 0 ? "+" : ""}${d.check.diffPp.toFixed(1)} pp`} from its
          measured hit rate (tolerance {d.check.tolerancePp} pp). The rest&apos;s pool is the merged curve minus{" "}
          {d.prefix}&apos;s; below about half of today&apos;s memory it may read high when the rest is few large items.
        </p>
      )}
    </div>
  );
}
