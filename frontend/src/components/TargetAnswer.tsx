import type { Sizing } from "../api/types";
import { formatBytes, formatBytesDelta, formatMoney, formatMoneyDelta, formatPercent } from "../lib/format";

/** The answer in words and numbers: "92 % needs 11.4 GiB, +3.4 GiB, +$41/month". */
export function answerSentence(s: Sizing): string {
  const t = formatPercent(s.target);
  if (s.bytes === null) return s.message ?? `${t} is beyond what the curve can tell: it does not reach that hit rate in its range.`;
  const parts = [`${t} needs ${formatBytes(s.bytes)}`];
  if (s.deltaBytes !== null) parts.push(formatBytesDelta(s.deltaBytes));
  if (s.deltaCost !== null) parts.push(`${formatMoneyDelta(s.deltaCost, s.currency)}/month`);
  return parts.join(", ");
}

export function TargetAnswer({ sizing, pending }: { sizing: Sizing; pending: boolean }) {
  return (
    <div className={pending ? "answer pending" : "answer"} aria-live="polite" aria-busy={pending}>
      <p className="answer-sentence" data-testid="target-answer" data-target={sizing.target} data-bytes={sizing.bytes ?? ""}>
        {answerSentence(sizing)}
      </p>
      {sizing.bytes !== null && (
        <dl className="answer-facts">
          <div>
            <dt>Memory for target</dt>
            <dd>{formatBytes(sizing.bytes)}</dd>
          </div>
          <div>
            <dt>Today</dt>
            <dd>{formatBytes(sizing.currentBytes)}</dd>
          </div>
          {sizing.band && sizing.band.loBytes !== null && (
            <div>
              <dt>Likely range</dt>
              <dd>
                {formatBytes(sizing.band.loBytes)} – {sizing.band.hiBytes === null ? "beyond the curve" : formatBytes(sizing.band.hiBytes)}
              </dd>
            </div>
          )}
          {sizing.monthlyCostNow !== null && (
            <div>
              <dt>Cost / month</dt>
              <dd>
                {formatMoney(sizing.monthlyCostNow, sizing.currency)} → {formatMoney(sizing.monthlyCostAtTarget ?? NaN, sizing.currency)}
              </dd>
            </div>
          )}
          <div>
            <dt>Basis</dt>
            <dd>
              {sizing.basis}
              {sizing.curveAgeSeconds !== null && `, curve ${Math.round(sizing.curveAgeSeconds / 60)} min old`}
            </dd>
          </div>
        </dl>
      )}
    </div>
  );
}
