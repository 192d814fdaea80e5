import type { ReactNode } from "react";
import type { Sizing } from "../api/types";
import { isUnknown } from "../api/endpoints";
import { STATS_ONLY_LABEL } from "./Bits";
import {
  formatBytes,
  formatBytesDelta,
  formatDuration,
  formatMoney,
  formatMoneyDelta,
  formatPercent,
  MEMORY_LIMIT,
  MEMORY_USED,
  MiB,
  formatHitRate,
} from "../lib/format";

/** memcached's -m flag for a limit in bytes (it takes whole megabytes, MiB). */
export const mFlag = (bytes: number) => `-m ${Math.ceil(bytes / MiB - 1e-9)}`;

/** Text with every "-m N" and "(-m)" kept on one line (a narrow screen would break it after the hyphen). */
export function keepFlags(text: string): ReactNode[] {
  return text.split(/(-m \d+|\(-m\))/).map((part, i) => (i % 2 ? <span key={i} className="nowrap">{part}</span> : part));
}

/** Agent memory per tracked key for each step of --ghost-factor (profiler-agent/README.md: 40 B at 2, 95 B at 5). */
const GHOST_BYTES_PER_KEY_PER_STEP = 19;

/** "memcached still filling — 41 MiB of 64 MiB, full in about 4 min" (null when not warming up). */
export function warmupSentence(s: Sizing): string | null {
  if (s.status !== "warming_up") return null;
  const of = s.usedBytes !== null && s.currentLimitBytes !== null ? ` — ${formatBytes(s.usedBytes)} of ${formatBytes(s.currentLimitBytes)}` : "";
  const when = s.fullInSeconds !== null ? `, full in about ${formatDuration(s.fullInSeconds)}` : "";
  return `memcached still filling${of}${when}`;
}

/** The one -m to set in words: "-m 32", or for a cluster "-m 32 on each of 3 nodes" (the API's
 * recommended limit, the value the e-mail, the alerts, /metrics and the autoscaler client give). */
export function limitWords(s: Sizing): string | null {
  if (s.recommendedBytes === null) return null;
  return s.nodes !== null && s.nodes > 1 ? `${mFlag(s.recommendedBytes)} on each of ${s.nodes} nodes` : mFlag(s.recommendedBytes);
}

/** The newest curve's own -m beside the one to set, when they differ: what it is and why it
 * differs, in the API's words (memory_limit_note), capitalised. */
export function windowLimitWords(s: Sizing): string | null {
  return s.windowLimitNote ? `${s.windowLimitNote[0].toUpperCase()}${s.windowLimitNote.slice(1)}.` : null;
}

/** What the answer gives the cluster or server in all: every node's -m to set (the raw bytes without one). */
export function neededTotal(s: Sizing): number | null {
  if (s.recommendedBytes !== null) return s.recommendedBytes * (s.nodes ?? 1);
  return s.bytes;
}

/** Today's -m against the answer in the API's words, capitalised: "At the edge: within the
 * estimate's band (-m 63 – 69); …" (null while the answer is not known). */
export function memoryStateSentence(s: Sizing): string | null {
  const w = s.memoryStateWords;
  return s.memoryState && w ? `${w[0].toUpperCase()}${w.slice(1)}.` : null;
}

/** "Unknown until memcached is full …" (null for a known answer): the API's words. */
export function unknownSentence(s: Sizing): string | null {
  if (!isUnknown(s.status)) return null;
  const why = s.unknownUntil ?? (s.status === "warming_up" ? "unknown until memcached is full" : "unknown until the agent has seen further");
  return `${formatHitRate(s.target)} hit rate: ${why}.`;
}

/** The change the answer asks for: its -m in all against today's limit, like against like (the
 *  clusters card once set the curve's bytes against the curve's today, "+610 MiB", where the
 *  cluster page said "+516 MiB" for the same answer). */
export function limitDelta(s: Sizing): number | null {
  const total = neededTotal(s);
  if (s.deltaBytes === null || total === null) return null;
  return total - (s.currentLimitBytes ?? s.currentBytes);
}

/** The name of today's limit: "Memory limit (-m)", ", all nodes" for a cluster of several. */
export const limitLabel = (s: Sizing) => (s.nodes !== null && s.nodes > 1 ? `${MEMORY_LIMIT}, all nodes` : MEMORY_LIMIT);

/** Today's limit and the bytes in use toward it: "1.1 GiB · Used 1.0 GiB". */
export function limitAndUsed(s: Sizing): string {
  const used = s.usedBytes !== null ? ` · ${MEMORY_USED} ${formatBytes(s.usedBytes)}` : "";
  return `${formatBytes(s.currentLimitBytes ?? s.currentBytes)}${used}`;
}

/** The curve page's memory today: the limit and the bytes in use under their one names, and the
 *  curve's own x today (the slab pages holding items, where the chart's "now" line stands) said as
 *  such: "Memory limit (-m) 832 MiB · Used 832 MiB, 785 MiB of it holding items (the chart's now)".
 *  The header once said "today 785 MiB" above the answer's "-m today 832 MiB". */
export function memoryToday(curveBytes: number, s: Sizing | null): string {
  const items = `${formatBytes(curveBytes)} of it holding items (the chart's now)`;
  if (!s || s.currentLimitBytes === null) return `${formatBytes(curveBytes)} holding items (the chart's now)`;
  return `${limitLabel(s)} ${limitAndUsed(s)}, ${items}`;
}

/** The answer in words and numbers: "92 % hit rate needs 11.4 GiB (-m 11674), +3.4 GiB, +$41/month". */
export function answerSentence(s: Sizing): string {
  const t = `${formatHitRate(s.target)} hit rate`;
  const unknown = unknownSentence(s);
  if (unknown) return unknown;
  if (s.status === "above_curve") {
    // the bound also in the unit memcached is started with: ", -m above 9728"
    const above = s.limitAtLeastBytes !== null ? `, ${mFlag(s.limitAtLeastBytes).replace("-m ", "-m above ")}${s.nodes !== null && s.nodes > 1 ? ` on each of ${s.nodes} nodes` : ""}` : "";
    const bound = s.atLeastBytes !== null ? `more than ${formatBytes(s.atLeastBytes)}${above}` : "more memory than the curve covers";
    const reach = s.maxHitRatio !== null && s.maxBytes !== null ? ` (the curve reaches ${formatHitRate(s.maxHitRatio)} at ${formatBytes(s.maxBytes)})` : "";
    return `${t} needs ${bound}${reach}.`;
  }
  if (s.status === "unreachable" || s.bytes === null) {
    const top = s.maxHitRatio !== null ? `: the curve levels off at ${formatHitRate(s.maxHitRatio)}` : "";
    return `No memory size reaches ${t}${top}.`;
  }
  const total = neededTotal(s) ?? s.bytes;
  const limit = limitWords(s);
  const delta = limitDelta(s);
  const parts = [`${t} needs ${formatBytes(total)}${limit ? ` (${limit})` : ""}`];
  if (delta !== null) parts.push(formatBytesDelta(delta));
  if (s.deltaCost !== null) parts.push(`${formatMoneyDelta(s.deltaCost, s.currency)}/month`);
  return parts.join(", ");
}

/** What to do to see further than the curve does. */
function remedy(s: Sizing): string | null {
  if (s.status !== "above_curve") return null;
  return (
    "The agent sees up to its --ghost-factor times today's memory (default 5). Run it with a larger " +
    `--ghost-factor to see further: each step costs about ${GHOST_BYTES_PER_KEY_PER_STEP} B of agent memory per tracked key.`
  );
}

/** What the band rests on, as the API's band.basis says. */
function bandBasisText(s: Sizing): string | null {
  const b = s.band;
  if (!b || b.basis === null) return null;
  const who = s.nodes !== null ? "its servers" : "this server";
  if (b.basis === "benchmark_prior") return `from the benchmark's prediction error: no prediction of ${who} graded yet`;
  const n = b.gradedPredictions ?? 0;
  return `from ${n} graded prediction${n === 1 ? "" : "s"} of ${who}`;
}

function bandText(s: Sizing): string | null {
  const b = s.band;
  if (!b || b.minBytes === null) return null;
  const hi = b.maxBytes === null ? `more than ${formatBytes(s.maxBytes ?? b.minBytes)}` : formatBytes(b.maxBytes);
  return `${formatBytes(b.minBytes)} – ${hi}`;
}

/** " on each of 3 nodes" beside a per-node -m (a cluster's -m and recommended limit are per node). */
function eachNode(s: Sizing): ReactNode {
  return s.nodes !== null && s.nodes > 1 ? <span className="muted"> on each of {s.nodes} nodes</span> : null;
}

export function TargetAnswer({ sizing, pending }: { sizing: Sizing; pending: boolean }) {
  const warm = warmupSentence(sizing);
  const fix = remedy(sizing);
  const windowLine = windowLimitWords(sizing);
  const range = bandText(sizing);
  const conf = sizing.band?.confidence;
  return (
    <div className={pending ? "answer pending" : "answer"} aria-live="polite" aria-busy={pending}>
      {warm && (
        <p className="warming" role="status" data-testid="warming">
          {warm}. The answer settles once memcached's memory is full.
        </p>
      )}
      <p
        className="answer-sentence"
        data-testid="target-answer"
        data-status={sizing.status}
        data-target={sizing.target}
        data-bytes={sizing.recommendedBytes ?? sizing.bytes ?? ""}
      >
        {keepFlags(answerSentence(sizing))}
      </p>
      {memoryStateSentence(sizing) && (
        <p className={`memory-state state-${sizing.memoryState}`} data-testid="answer-memory-state" data-state={sizing.memoryState ?? ""}>
          {keepFlags(memoryStateSentence(sizing)!)}
        </p>
      )}
      {fix && <p className="muted small">{fix}</p>}
      <dl className="answer-facts">
        {sizing.recommendedBytes !== null && sizing.status === "ok" && (
          <div>
            <dt>memcached -m to set</dt>
            <dd data-testid="answer-limit">
              <code>{mFlag(sizing.recommendedBytes)}</code>
              {eachNode(sizing)} {sizing.stable ? "(stable)" : "(settling)"}
              {windowLine && (
                <span className="muted small window-limit" data-testid="answer-window-limit">
                  {" "}
                  {keepFlags(windowLine)}
                </span>
              )}
            </dd>
          </div>
        )}
        {sizing.bytes !== null && sizing.recommendedBytes === null && (
          <div>
            <dt>Memory for target</dt>
            <dd>{formatBytes(sizing.bytes)}</dd>
          </div>
        )}
        <div>
          <dt>{keepFlags(limitLabel(sizing))}</dt>
          <dd data-testid="answer-limit-today">{limitAndUsed(sizing)}</dd>
        </div>
        {range && (
          <div>
            <dt>Likely range{conf ? ` (${formatPercent(conf, 0)} confidence)` : ""}</dt>
            <dd data-testid="answer-band" data-band-basis={sizing.band?.basis ?? ""}>
              {range}
              {bandBasisText(sizing) && <span className="muted small band-basis"> {bandBasisText(sizing)}</span>}
            </dd>
          </div>
        )}
        {sizing.monthlyCostNow !== null && sizing.monthlyCostAtTarget !== null && (
          <div>
            <dt>Cost / month</dt>
            <dd>
              {formatMoney(sizing.monthlyCostNow, sizing.currency)} → {formatMoney(sizing.monthlyCostAtTarget, sizing.currency)}
            </dd>
          </div>
        )}
        <div>
          <dt>Basis</dt>
          <dd data-testid="answer-basis" data-basis={sizing.dataBasis} data-ttl-aware={sizing.ttlAware}>
            {sizing.dataBasis === "stats_only"
              ? `${STATS_ONLY_LABEL} (model)`
              : sizing.ttlAware
                ? `${sizing.basis}, TTL-aware (expired items are not capacity misses)`
                : sizing.basis}
            {sizing.curveAgeSeconds !== null && `, curve ${formatDuration(sizing.curveAgeSeconds)} old`}
          </dd>
        </div>
      </dl>
    </div>
  );
}
