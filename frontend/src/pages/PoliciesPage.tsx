import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { getClusterCurve, getServerCurve, getSimulation, listSimulations, startSimulation } from "../api/endpoints";
import type { PolicyResult, RunSample, SimulationRun } from "../api/types";
import { drawMultiCurveChart, type Series } from "../charts/multiCurveChart";
import { Breadcrumbs, SubjectTabs } from "../components/Bits";
import { PolicyMoney } from "../components/PolicyMoney";
import { Empty, Fetched } from "../components/States";
import { useAsync, useWidth } from "../hooks";
import { hitAt, type CurvePoint } from "../lib/curve";
import { formatBytes, formatChange, formatDuration, formatPercent, formatPp, formatTime, formatHitRate } from "../lib/format";

/** A relative change: "−78 %", "+5 %". */
import { canWrite, useSession } from "../session";
import * as d3 from "d3";
import { SeriesLegend } from "../components/SeriesLegend";
import { TableScroll } from "../components/TableScroll";

/** Policies the simulator knows, by the names the API uses. */
export const POLICIES: Array<[string, string]> = [
  ["lru", "LRU"],
  ["mcslru", "memcached segmented LRU"],
  ["fifo", "FIFO"],
  ["clock", "CLOCK"],
  ["gclock", "GCLOCK"],
  ["clockpro", "CLOCK-Pro"],
  ["gdwheel", "GD-Wheel"],
  ["nbq-clock", "NbQ-CLOCK"],
  ["baglru", "Bag-LRU"],
  ["arc", "ARC"],
  ["s3fifo", "S3-FIFO"],
  ["sieve", "SIEVE"],
  ["twoq", "2Q"],
  ["lfu", "LFU"],
  ["gdsf", "GDSF"],
  ["lirs", "LIRS"],
  ["wtinylfu", "W-TinyLFU"],
  ["lhd", "LHD"],
  ["mlclock", "ML-CLOCK"],
  ["opt", "Belady OPT (offline bound)"],
];

/** Sizes to simulate: eight steps from a sixteenth of today's memory to twice it, whole MiB,
 * denser below today's memory, where a sample's curves still differ (above the sample's footprint
 * every policy holds all of it and they meet). */
export function simulationSizes(currentBytes: number): number[] {
  const MiB = 1024 * 1024;
  const f = [0.0625, 0.125, 0.25, 0.5, 0.75, 1, 1.5, 2];
  return [...new Set(f.map((k) => Math.max(1, Math.round((k * currentBytes) / MiB)) * MiB))];
}
const label = (p: string) => POLICIES.find(([k]) => k === p)?.[1] ?? p;
// more policies than one 10-colour scheme: extend it so no two policies share a colour
const color = d3.scaleOrdinal<string, string>(POLICIES.map(([k]) => k), [...d3.schemeTableau10, ...d3.schemeDark2, ...d3.schemeSet1]);

export function PoliciesPage({ kind, id }: { kind: "server" | "cluster"; id: string }) {
  const runs = useAsync((signal) => listSimulations(kind, id, signal), [kind, id]);
  const curve = useAsync((signal) => (kind === "server" ? getServerCurve(id, signal) : getClusterCurve(id, signal)).catch(() => null), [kind, id]);
  const currentBytes = curve.state === "ready" && curve.data ? curve.data.currentBytes : null;
  const main = curve.state === "ready" && curve.data ? curve.data.points : null;
  return (
    <div className="page">
      <Breadcrumbs items={kind === "server" ? [["Servers", "/servers"], ["Policies", null]] : [["Clusters", "/"], ["Policies", null]]} />
      <SubjectTabs kind={kind} id={id} />
      <header className="view-head">
        <h1>Policy comparison</h1>
        <p className="muted">The same sampled traffic replayed through other replacement policies.</p>
      </header>
      <Fetched result={runs} what="simulation runs">
        {(list) => <Runs kind={kind} id={id} runs={list} currentBytes={currentBytes} main={main} reload={runs.reload} />}
      </Fetched>
    </div>
  );
}

function Runs({
  kind,
  id,
  runs,
  currentBytes,
  main,
  reload,
}: {
  kind: "server" | "cluster";
  id: string;
  runs: SimulationRun[];
  currentBytes: number | null;
  main: CurvePoint[] | null;
  reload: () => void;
}) {
  const { session } = useSession();
  const sorted = [...runs].sort((a, b) => (b.createdAt ?? "").localeCompare(a.createdAt ?? ""));
  const [picked, setPicked] = useState<string | null>(null);
  // the shown run is polled while it computes; the list shows its status as polled, not as listed
  const [latest, setLatest] = useState<Record<string, string>>({});
  const shown = sorted.find((r) => r.id === picked) ?? sorted[0];
  return (
    <>
      {canWrite(session) && <NewRun kind={kind} id={id} currentBytes={currentBytes} onStarted={reload} />}
      {sorted.length > 1 && (
        <nav className="run-list" aria-label="Simulation runs" data-testid="run-list">
          <h2 className="small">Runs ({sorted.length})</h2>
          <ul>
            {sorted.map((r) => (
              <li key={r.id}>
                <button type="button" className="linkish" aria-current={r.id === shown?.id ? "true" : undefined} onClick={() => setPicked(r.id)}>
                  {r.createdAt ? formatTime(new Date(r.createdAt)) : "—"} · {r.policies.map(label).join(", ")} · {latest[r.id] ?? r.status}
                </button>
              </li>
            ))}
          </ul>
        </nav>
      )}
      {shown ? (
        <RunView
          key={shown.id}
          initial={shown}
          currentBytes={currentBytes}
          main={main}
          onStatus={(status) => setLatest((m) => (m[shown.id] === status ? m : { ...m, [shown.id]: status }))}
        />
      ) : (
        <Empty title="No simulation yet">
          <p>Start one above: it replays the last hours of sampled requests the agent uploaded.</p>
        </Empty>
      )}
    </>
  );
}

function NewRun({
  kind,
  id,
  currentBytes,
  onStarted,
}: {
  kind: "server" | "cluster";
  id: string;
  currentBytes: number | null;
  onStarted: () => void;
}) {
  const [chosen, setChosen] = useState<string[]>(["lru", "gdwheel", "nbq-clock"]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      await startSimulation(kind, id, chosen, simulationSizes(currentBytes!));
      onStarted();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <fieldset className="card policy-picker">
      <legend>Compare policies</legend>
      <div className="checks">
        {POLICIES.map(([k, name]) => (
          <label key={k} className="check">
            <input
              type="checkbox"
              checked={chosen.includes(k)}
              onChange={(e) => setChosen(e.target.checked ? [...chosen, k] : chosen.filter((c) => c !== k))}
            />{" "}
            {name}
          </label>
        ))}
      </div>
      <button type="button" className="primary" disabled={busy || chosen.length === 0 || !currentBytes} onClick={start} data-testid="start-run">
        Run simulation
      </button>
      {!currentBytes && <p className="muted small">Simulations need the server's memory: wait for its first curve.</p>}
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}

/** One run: progress while it computes (polled), then curves and the table. */
function RunView({
  initial,
  currentBytes,
  main,
  onStatus,
}: {
  initial: SimulationRun;
  currentBytes: number | null;
  main: CurvePoint[] | null;
  onStatus: (status: string) => void;
}) {
  // The list carries no results: fetch the run itself, then poll it while it computes.
  const [run, setRun] = useState(initial);
  const [fetched, setFetched] = useState(false);
  useEffect(() => onStatus(run.status), [run.status, onStatus]);
  useEffect(() => {
    if (fetched && (run.status === "done" || run.status === "failed")) return;
    const t = setTimeout(
      () => {
        getSimulation(run.id).then(
          (r) => {
            setRun(r);
            setFetched(true);
          },
          () => undefined,
        );
      },
      fetched ? 1500 : 0,
    );
    return () => clearTimeout(t);
  }, [run, fetched]);
  if (run.status === "failed")
    return (
      <p className="state error" role="alert">
        The simulation failed: {run.error ?? "no reason given"}.
      </p>
    );
  const pct = Math.round((run.progress ?? 0) * 100);
  return (
    <section aria-labelledby="run-title">
      <h2 id="run-title">
        {run.policies.map(label).join(" · ")}
        <span className="muted small"> · {run.createdAt ? formatTime(new Date(run.createdAt)) : ""}</span>
      </h2>
      {run.status !== "done" && (
        <div className="progress" data-testid="run-progress">
          <progress max={100} value={pct} aria-label="simulation progress" /> {run.status === "pending" ? "waiting for a worker" : `${pct} %`}
        </div>
      )}
      {run.sample && <SampleLine sample={run.sample} />}
      {run.results.length > 0 && run.sample && <Agreement results={run.results} sample={run.sample} main={main} currentBytes={currentBytes} />}
      {run.results.length > 0 && (
        <PolicyResults results={run.results} currentBytes={currentBytes} sample={run.sample} runId={run.status === "done" ? run.id : null} />
      )}
    </section>
  );
}

/** The size the table compares at: today's memory, unless every policy holds the whole sample there
 * (at or above its footprint), then the largest simulated size below the footprint. */
export function comparedAt(sizes: number[], currentBytes: number | null, footprint: number | null): { at: number; why: string | null } {
  const largest = Math.max(...sizes);
  const want = currentBytes ?? largest;
  if (footprint == null || want < footprint) return { at: want, why: null };
  const below = sizes.filter((x) => x < footprint);
  if (!below.length) return { at: want, why: `every simulated size holds the whole sample (${formatBytes(footprint)}): the policies cannot differ` };
  const at = Math.max(...below);
  return {
    at,
    why: `at ${formatBytes(want)} every policy holds the whole sample (${formatBytes(footprint)} of keys), so they would all read the same: compared at ${formatBytes(at)}, below it`,
  };
}

function PolicyResults({
  results,
  currentBytes,
  sample,
  runId,
}: {
  results: PolicyResult[];
  currentBytes: number | null;
  sample: RunSample | null;
  runId: string | null;
}) {
  const [box, width] = useWidth<HTMLDivElement>();
  const svg = useRef<SVGSVGElement>(null);
  const ordered = useMemo(() => [...results].sort((a, b) => (a.policy === "lru" ? -1 : b.policy === "lru" ? 1 : a.policy.localeCompare(b.policy))), [results]);
  const series: Series[] = useMemo(
    () => ordered.map((r) => ({ key: r.policy, label: label(r.policy), color: color(r.policy), points: r.points })),
    [ordered],
  );
  useLayoutEffect(() => {
    if (!width) return;
    drawMultiCurveChart(svg.current!, series, {
      width,
      height: width < 520 ? 260 : 340,
      margin: { top: 16, right: 16, bottom: 40, left: 48 },
      currentBytes,
    });
  });
  // The table compares at today's memory (or the largest size without one), below the sample's footprint.
  const { at, why } = comparedAt(results.flatMap((r) => r.points.map((p) => p.bytes)), currentBytes, sample?.footprintBytes ?? null);
  const lru = results.find((r) => r.policy === "lru");
  const lruHit = lru ? hitAt(lru.points, at) : null;
  const costAt = (r: PolicyResult) => {
    const i = r.points.findIndex((p) => p.bytes >= at);
    return i < 0 ? null : r.recomputeCostUs[i];
  };
  const lruCost = lru ? costAt(lru) : null;
  return (
    <div ref={box}>
      <SeriesLegend series={series} />
      <div className="chart">
        <svg ref={svg} role="img" aria-label="Hit rate versus memory per policy" data-testid="policy-chart" />
      </div>
      <TableScroll>
        <table data-testid="policy-table">
          <caption>
            At {formatBytes(at)}
            {why && <span className="muted small" data-testid="compared-at"> ({why})</span>}
          </caption>
          <thead>
            <tr>
              <th scope="col">Policy</th>
              <th scope="col">Hit rate</th>
              <th scope="col">vs LRU</th>
              <th scope="col">Recompute time (total)</th>
              <th scope="col">vs LRU</th>
            </tr>
          </thead>
          <tbody>
            {ordered.map((r) => {
              const h = hitAt(r.points, at);
              const c = costAt(r);
              return (
                <tr key={r.policy}>
                  <th scope="row">{label(r.policy)}</th>
                  <td>{h === null ? "—" : formatHitRate(h)}</td>
                  <td>{h !== null && lruHit !== null && r.policy !== "lru" ? formatPp(h - lruHit, 2) : ""}</td>
                  <td>{c === null ? "—" : `${(c / 1e6).toFixed(1)} s`}</td>
                  <td>{c !== null && lruCost && r.policy !== "lru" ? formatChange((c - lruCost) / lruCost) : ""}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
      {runId && <PolicyMoney runId={runId} at={at} label={label} />}
      {sample?.recompute && (
        <p className="muted small" data-testid="recompute-what">
          {sample.recompute[0].toUpperCase() + sample.recompute.slice(1)}.
        </p>
      )}
    </div>
  );
}

/** "Sample: 4,210 keys, 61,000 requests over 2 h at a 1 % sample rate" and the worker's warnings. */
function SampleLine({ sample }: { sample: RunSample }) {
  const n = (v: number | null) => (v === null ? "?" : Math.round(v).toLocaleString("en-US"));
  return (
    <div className="run-sample" data-testid="run-sample">
      <p className="muted">
        Sample: {n(sample.keys)} keys sampled, {n(sample.requests)} requests over{" "}
        {sample.spanSeconds === null ? "?" : formatDuration(sample.spanSeconds)} of traffic, at a{" "}
        {sample.rate === null ? "?" : formatPercent(sample.rate, sample.rate < 0.01 ? 2 : 0)} sample rate.
      </p>
      {sample.periodStart !== null && sample.periodEnd !== null && (
        <p className="muted" data-testid="run-period">
          Replayed: {formatTime(new Date(sample.periodStart))} to {formatTime(new Date(sample.periodEnd))}
          {sample.simWarmup ? `; the first ${formatPercent(sample.simWarmup, 0)} of it only warms the simulated caches and is not counted` : ""}.
        </p>
      )}
      {sample.notes.map((note) => (
        <p key={note} className={note.startsWith("small sample") ? "warning-note" : "muted small"} role={note.startsWith("small sample") ? "status" : undefined}>
          {note}
        </p>
      ))}
    </div>
  );
}

/** Sampling error of a hit rate from a spatial key sample: two standard errors over the sampled
 * keys (a key's requests hit or miss together), at least 0.5 pp. */
export function samplingErrorPp(hit: number, keys: number): number {
  return Math.max(0.5, 200 * Math.sqrt((hit * (1 - hit)) / Math.max(1, keys)));
}

/** Does the simulation agree with the main curve at today's memory, within its sampling error? */
function Agreement({ results, sample, main, currentBytes }: { results: PolicyResult[]; sample: RunSample; main: CurvePoint[] | null; currentBytes: number | null }) {
  if (!main || !main.length || currentBytes === null) return null;
  const own = results.find((r) => r.policy === "mcslru") ?? results.find((r) => r.policy === "lru");
  if (!own) return null;
  const mainHit = hitAt(main, currentBytes);
  const simHit = hitAt(own.points, currentBytes);
  if (mainHit === null || simHit === null) return null;
  const err = samplingErrorPp(simHit, sample.keys ?? 0);
  const diff = (simHit - mainHit) * 100;
  const inside = Math.abs(diff) <= err;
  const why =
    own.policy === "lru"
      ? " memcached runs a segmented LRU, which this run did not simulate (add memcached segmented LRU);"
      : "";
  return (
    <p className={inside ? "muted" : "warning-note"} data-testid="run-agreement">
      At today's memory ({formatBytes(currentBytes)}) the main curve says {formatHitRate(mainHit)}; simulated {label(own.policy)}{" "}
      {formatHitRate(simHit)}:{" "}
      {inside
        ? `within the sampling error (±${err.toFixed(1)} pp).`
        : `${Math.abs(diff).toFixed(1)} pp apart, more than the sampling error (±${err.toFixed(1)} pp):${why} the sample covers the run's window only, while the main curve rests on the latest windows.`}
    </p>
  );
}
