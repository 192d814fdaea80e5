import { useCallback, useLayoutEffect, useMemo, useRef, useState } from "react";
import { ApiError } from "../api/client";
import { getClusterCurve, getServerCurve, getSizing } from "../api/endpoints";
import type { CurveView } from "../api/types";
import { CurveChart } from "../components/CurveChart";
import { CurveTable } from "../components/CurveTable";
import { SlabClasses } from "../components/SlabClasses";
import { FlashTierPanel } from "../components/FlashTierPanel";
import { StatsOnlyLabel } from "../components/Bits";
import { Empty, Fetched, NoAgentYet } from "../components/States";
import { keepFlags, memoryToday, TargetAnswer } from "../components/TargetAnswer";
import { useAsync, useDebounced } from "../hooks";
import { bytesForHit, maxHit } from "../lib/curve";
import { MEASURED_HIT_RATE, MEASURED_HIT_RATE_MEANS, formatAge, formatBytes, formatPercent, formatHitRate } from "../lib/format";

declare global {
  interface Window {
    __hitcurveTimings?: Record<string, number>;
  }
}

export function CurvePage({ kind, id }: { kind: "server" | "cluster"; id: string }) {
  const result = useAsync((signal) => (kind === "server" ? getServerCurve(id, signal) : getClusterCurve(id, signal)), [kind, id]);
  if (result.state === "error" && result.error instanceof ApiError && result.error.status === 409) {
    // 409: the server or cluster exists but has no curve yet.
    return <NoAgentYet />;
  }
  return (
    <Fetched result={result} what="the curve">
      {(view) =>
        view.points.length ? <CurveBody view={view} /> : view.kind === "cluster" ? <NoClusterCurveYet servers={view.serverCount ?? 0} /> : <NoAgentYet />
      }
    </Fetched>
  );
}

/** A cluster without a curve: it waits for servers, or for its servers' first processed windows. */
function NoClusterCurveYet({ servers }: { servers: number }) {
  if (servers === 0)
    return (
      <Empty title="No curve yet">
        <p>This cluster has no server yet: add one under “Servers in this cluster” below, or on the Servers page.</p>
      </Empty>
    );
  const whose = servers === 1 ? "its server's" : `its ${servers} servers'`;
  const agents = servers === 1 ? "its agent has" : "their agents have";
  return (
    <Empty title="No curve yet">
      <p>
        The worker makes this cluster&apos;s curve from {whose} first processed snapshots; it appears here once {agents} uploaded (an
        agent uploads once a minute).
      </p>
    </Empty>
  );
}

function initialTarget(view: CurveView): number {
  if (view.targetHitRatio !== null) return view.targetHitRatio;
  const m = view.measuredHitRatio ?? maxHit(view.points) * 0.9;
  return Math.min(Math.round((m + 0.02) * 100) / 100, Math.floor(maxHit(view.points) * 100) / 100);
}

function CurveBody({ view }: { view: CurveView }) {
  // Render timing, from the first render with data: "render" ends after the task that renders
  // and draws (React re-renders children at their measured widths in that same task) plus a
  // forced style and layout; "frame" ends at the next animation frame (includes waiting for it).
  // The marks let a browser trace split this time into main-thread work and waiting.
  const start = useRef<number | null>(null);
  if (start.current === null) {
    start.current = performance.now();
    performance.mark("hitcurve:curve-view:start");
  }
  const root = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const t0 = start.current!;
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      root.current?.getBoundingClientRect();
      performance.mark("hitcurve:curve-view:end");
      const ms = performance.now() - t0;
      root.current?.setAttribute("data-render-ms", ms.toFixed(1));
      requestAnimationFrame(() => root.current?.setAttribute("data-frame-ms", (performance.now() - t0).toFixed(1)));
      window.__hitcurveTimings = { ...window.__hitcurveTimings, curveView: ms, curveViewClasses: view.classes.length };
      channel.port1.close();
    };
    channel.port2.postMessage(null);
  }, [view]);

  const [target, setTarget] = useState(() => initialTarget(view));
  const [typed, setTyped] = useState(() => (initialTarget(view) * 100).toFixed(1));
  const [zoom, setZoom] = useState<[number, number] | null>(null);
  const [mode, setMode] = useState<"chart" | "table">("chart");

  const localBytes = useMemo(() => bytesForHit(view.points, target), [view.points, target]);
  const asked = useDebounced(target, 180);
  const sizing = useAsync((signal) => getSizing(view.kind, view.id, asked, view.pricePerGbMonth, signal), [view.kind, view.id, asked]);
  const pending = sizing.state === "loading" || asked !== target || (sizing.state === "ready" && sizing.data.target !== asked);

  const onTarget = useCallback((t: number) => {
    const r = Math.round(t * 1000) / 1000;
    setTarget(r);
    setTyped((r * 100).toFixed(1));
  }, []);
  const onTyped = (s: string) => {
    setTyped(s);
    const v = Number(s.replace(",", "."));
    if (Number.isFinite(v) && v > 0 && v < 100) setTarget(Math.round(v * 10) / 1000);
  };

  const top = maxHit(view.points);
  // While memcached is still filling it has evicted nothing: past today's memory nothing is observed.
  const warming = sizing.state === "ready" && sizing.data.status === "warming_up";
  const observedMax = view.observedMaxBytes ?? (warming ? view.currentBytes : null);
  // What the curve rests on: a server's curve says it; a cluster's comes with its sizing answer.
  const basis = view.kind === "server" ? view.dataBasis : sizing.state === "ready" ? sizing.data.dataBasis : view.dataBasis;
  return (
    <div ref={root} className="curve-view" data-testid="curve-view">
      <header className="view-head">
        <h1>{view.name}</h1>
        <p className="muted">
          {view.kind === "cluster" ? "Cluster" : "Server"} curve · {basis === "stats_only" ? "stats-only model" : view.basis} · computed {formatAge(view.computedAt)} ·{" "}
          <span data-testid="memory-today">{keepFlags(memoryToday(view.currentBytes, sizing.state === "ready" ? sizing.data : null))}</span>
          {view.measuredHitRatio !== null && (
            <>
              {" "}
              · <span title={MEASURED_HIT_RATE_MEANS}>{MEASURED_HIT_RATE.toLowerCase()}</span> {formatHitRate(view.measuredHitRatio)}
            </>
          )}
          {view.lossRatio !== null && basis === "watch" && <> · watch-stream event loss {formatPercent(view.lossRatio, 2)}</>}
        </p>
        <StatsOnlyLabel basis={basis} />
        {view.windowsNote && (
          <p className="muted small" data-testid="windows-note">
            Drawn, as the answer is, from the good recent windows ({view.windowsNote}).
          </p>
        )}
      </header>

      {view.flashTier && <FlashTierPanel tier={view.flashTier} />}

      <section className="target-panel" aria-labelledby="target-title">
        <h2 id="target-title" className="sr-only">
          Target
        </h2>
        <label className="target-input">
          Target hit rate
          <span className="with-unit">
            <input
              type="number"
              inputMode="decimal"
              min={1}
              max={99.9}
              step={0.1}
              value={typed}
              onChange={(e) => onTyped(e.target.value)}
              data-testid="target-input"
            />
            %
          </span>
        </label>
        <input
          type="range"
          aria-label="Target hit rate slider"
          min={0}
          max={99.9}
          step={0.1}
          value={Math.round(target * 1000) / 10}
          onChange={(e) => onTarget(Number(e.target.value) / 100)}
          className="target-range"
        />
        {sizing.state === "ready" ? (
          <TargetAnswer sizing={sizing.data} pending={pending} />
        ) : sizing.state === "error" ? (
          <p className="answer error" role="alert" data-testid="target-answer">
            {sizing.error.message}
          </p>
        ) : (
          <p className="answer pending" data-testid="target-answer-loading">
            Asking the sizing service…
          </p>
        )}
        <p className="muted small">
          {observedMax !== null && observedMax < view.points[view.points.length - 1].bytes
            ? `Observed up to ${formatBytes(observedMax)} so far; the faded part of the curve is not observed yet, so hit rates there are lower bounds${warming ? "" : sizing.state === "ready" && sizing.data.status === "unknown" ? " (the agent sees further as memcached evicts)" : " (a larger agent --ghost-factor sees further)"}.`
            : `The curve covers up to ${formatBytes(view.points[view.points.length - 1].bytes)} (${formatHitRate(top)}); past that the agent has not observed enough to say.`}
        </p>
      </section>

      <div className="view-switch" role="group" aria-label="Show as">
        <button type="button" aria-pressed={mode === "chart"} onClick={() => setMode("chart")}>
          Chart
        </button>
        <button type="button" aria-pressed={mode === "table"} onClick={() => setMode("table")} data-testid="show-table">
          Table
        </button>
        {mode === "chart" && zoom && (
          <button type="button" onClick={() => setZoom(null)} data-testid="reset-zoom">
            Reset zoom
          </button>
        )}
        {mode === "chart" && <span className="muted small hint">Drag across the chart to zoom, drag the target handle to move it.</span>}
      </div>
      {mode === "chart" ? (
        <>
          <CurveChart
            id={`${view.kind}-${view.id}`}
            points={view.points}
            estimate={view.estimate}
            currentBytes={view.currentBytes}
            measuredHit={view.measuredHitRatio}
            target={target}
            targetBytes={localBytes}
            observedMaxBytes={observedMax}
            zoom={zoom}
            onZoom={setZoom}
            onTarget={onTarget}
          />
          <ul className="legend" aria-hidden="true">
            <li className="lg-curve" data-testid="legend-curve">
              {basis === "stats_only" ? "curve estimated from stats only (model)" : "calibrated curve"}
            </li>
            {observedMax !== null && <li className="lg-unobserved">not observed yet</li>}
            <li className="lg-band">{basis === "stats_only" ? "uncertainty band (wider: stats only)" : "uncertainty band"}</li>
            {view.estimate && <li className="lg-estimate">uncalibrated estimate</li>}
            <li className="lg-measured">measured today</li>
            <li className="lg-target">target</li>
          </ul>
        </>
      ) : (
        <CurveTable
          points={view.points}
          currentBytes={view.currentBytes}
          targetBytes={localBytes}
          pricePerGbMonth={view.pricePerGbMonth}
          currency={view.currency}
          observedMaxBytes={observedMax}
          fileName={`${view.name.replace(/[^\w.-]+/g, "_")}-curve.csv`}
        />
      )}

      {view.classes.length > 0 && <SlabClasses classes={view.classes} advice={view.advice} adviceHitGain={view.adviceHitGain} version={view.memcachedVersion} />}
    </div>
  );
}
