import type { Sizing } from "../api/types";
import { STATS_ONLY_LABEL } from "./Bits";
import { formatBytes, formatBytesDelta, formatDuration, formatMoney, formatMoneyDelta, formatPercent, MiB } from "../lib/format";

/** memcached's -m flag for a limit in bytes (it takes whole megabytes, MiB). */
export const mFlag = (bytes: number) => `-m ${Math.ceil(bytes / MiB - 1e-9)}`;

/** Agent memory per tracked key for each step of --ghost-factor (profiler-agent/README.md: 40 B at 2, 95 B at 5). */
const GHOST_BYTES_PER_KEY_PER_STEP = 19;

/** "memcached still filling — 41 MiB of 64 MiB, full in about 4 min" (null when not warming up). */
export function warmupSentence(s: Sizing): string | null {
  if (s.status !== "warming_up") return null;
  const of = s.usedBytes !== null && s.currentLimitBytes !== null ? ` — ${formatBytes(s.usedBytes)} of ${formatBytes(s.currentLimitBytes)}` : "";
  const when = s.fullInSeconds !== null ? `, full in about ${formatDuration(s.fullInSeconds)}` : "";
  return `memcached still filling${of}${when}`;
}

/** The answer in words and numbers: "92 % hit rate needs 11.4 GiB (-m 11674), +3.4 GiB, +$41/month". */
export function answerSentence(s: Sizing): string {
  const t = `${formatPercent(s.target)} hit rate`;
  if (s.status === "above_curve") {
    const bound = s.atLeastBytes !== null ? `more than ${formatBytes(s.atLeastBytes)}` : "more memory than the curve covers";
    const reach = s.maxHitRatio !== null && s.maxBytes !== null ? ` (the curve reaches ${formatPercent(s.maxHitRatio)} at ${formatBytes(s.maxBytes)})` : "";
    return `${t} needs ${bound}${reach}.`;
  }
  if (s.status === "unreachable" || s.bytes === null) {
    const top = s.maxHitRatio !== null ? `: the curve levels off at ${formatPercent(s.maxHitRatio)}` : "";
    return `No memory size reaches ${t}${top}.`;
  }
  const limit = s.memoryLimitBytes !== null ? ` (${mFlag(s.memoryLimitBytes)})` : "";
  const parts = [`${t} needs ${formatBytes(s.memoryLimitBytes ?? s.bytes)}${limit}`];
  if (s.deltaBytes !== null) parts.push(formatBytesDelta((s.memoryLimitBytes ?? s.bytes) - (s.currentLimitBytes ?? s.currentBytes)));
  if (s.deltaCost !== null) parts.push(`${formatMoneyDelta(s.deltaCost, s.currency)}/month`);
  return (s.status === "warming_up" ? "For now, " : "") + parts.join(", ");
}

/** What to do to see further than the curve does. */
function remedy(s: Sizing): string | null {
  if (s.status !== "above_curve") return null;
  return (
    "The agent sees up to its --ghost-factor times today's memory (default 5). Run it with a larger " +
    `--ghost-factor to see further: each step costs about ${GHOST_BYTES_PER_KEY_PER_STEP} B of agent memory per tracked key.`
  );
}

function bandText(s: Sizing): string | null {
  const b = s.band;
  if (!b || b.minBytes === null) return null;
  const hi = b.maxBytes === null ? `more than ${formatBytes(s.maxBytes ?? b.minBytes)}` : formatBytes(b.maxBytes);
  return `${formatBytes(b.minBytes)} – ${hi}`;
}

export function TargetAnswer({ sizing, pending }: { sizing: Sizing; pending: boolean }) {
  const warm = warmupSentence(sizing);
  const fix = remedy(sizing);
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
        data-bytes={sizing.memoryLimitBytes ?? sizing.bytes ?? ""}
      >
        {answerSentence(sizing)}
      </p>
      {fix && <p className="muted small">{fix}</p>}
      <dl className="answer-facts">
        {sizing.memoryLimitBytes !== null && sizing.status !== "above_curve" && (
          <div>
            <dt>memcached -m to set</dt>
            <dd>
              <code>{mFlag(sizing.memoryLimitBytes)}</code>
            </dd>
          </div>
        )}
        {sizing.bytes !== null && sizing.memoryLimitBytes === null && (
          <div>
            <dt>Memory for target</dt>
            <dd>{formatBytes(sizing.bytes)}</dd>
          </div>
        )}
        <div>
          <dt>-m today</dt>
          <dd>
            {formatBytes(sizing.currentLimitBytes ?? sizing.currentBytes)}
            {sizing.usedBytes !== null && <span className="muted"> ({formatBytes(sizing.usedBytes)} in use)</span>}
          </dd>
        </div>
        {range && (
          <div>
            <dt>Likely range{conf ? ` (${formatPercent(conf, 0)} confidence)` : ""}</dt>
            <dd>{range}</dd>
          </div>
        )}
        {sizing.recommendedBytes !== null && (
          <div>
            <dt>Recommended for autoscaling</dt>
            <dd>
              <code>{mFlag(sizing.recommendedBytes)}</code> {sizing.stable ? "(stable)" : "(settling)"}
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
          <dd data-testid="answer-basis" data-basis={sizing.dataBasis}>
            {sizing.dataBasis === "stats_only" ? `${STATS_ONLY_LABEL} (model)` : sizing.basis}
            {sizing.curveAgeSeconds !== null && `, curve ${formatDuration(sizing.curveAgeSeconds)} old`}
          </dd>
        </div>
      </dl>
    </div>
  );
}
