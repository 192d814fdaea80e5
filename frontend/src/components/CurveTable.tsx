import type { Curve } from "../lib/curve";
import { monthlyCost } from "../lib/curve";
import { formatBytes, formatMoney, formatHitRate } from "../lib/format";
import { TableScroll } from "./TableScroll";

/**
 * The chart's numbers as a table: one row per curve point, today's size and the answer marked.
 * Past `observedMaxBytes` (the agent's ghost does not see that far yet) the curve is held flat, so
 * the hit rate there is a lower bound: "at least", no band.
 */
export function CurveTable({
  points,
  currentBytes,
  targetBytes,
  pricePerGbMonth,
  currency,
  observedMaxBytes = null,
}: {
  points: Curve;
  currentBytes: number;
  targetBytes: number | null;
  pricePerGbMonth: number | null;
  currency: string;
  observedMaxBytes?: number | null;
}) {
  const bound = (bytes: number) => observedMaxBytes !== null && bytes > observedMaxBytes * (1 + 1e-9);
  const nearest = (b: number | null) =>
    b === null || !points.length
      ? -1
      : points.reduce((best, p, i) => (Math.abs(p.bytes - b) < Math.abs(points[best].bytes - b) ? i : best), 0);
  const cur = nearest(currentBytes);
  const tgt = nearest(targetBytes);
  const hasBand = points.some((p) => p.lo !== undefined);
  return (
    <TableScroll label="curve table">
      <table className="curve-table" data-testid="curve-table">
        <caption>
          Hit rate at each memory size{hasBand ? ", with the uncertainty band" : ""}. Today: {formatBytes(currentBytes)}.
          {observedMaxBytes !== null &&
            ` Past ${formatBytes(observedMaxBytes)} the agent has not observed yet: those hit rates are lower bounds (a larger agent --ghost-factor sees further).`}
        </caption>
        <thead>
          <tr>
            <th scope="col">Memory</th>
            <th scope="col">Hit rate</th>
            {hasBand && <th scope="col">Band</th>}
            {pricePerGbMonth !== null && <th scope="col">Cost / month</th>}
            <th scope="col">
              <span className="sr-only">Note</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {points.map((p, i) => (
            <tr
              key={p.bytes}
              data-bytes={p.bytes}
              data-hit={p.hit}
              data-bound={bound(p.bytes) ? "at-least" : undefined}
              className={[i === cur ? "is-current" : i === tgt ? "is-target" : "", bound(p.bytes) ? "is-unobserved" : ""].join(" ").trim() || undefined}
            >
              <td>{formatBytes(p.bytes)}</td>
              <td>{bound(p.bytes) ? `at least ${formatHitRate(p.hit)}` : formatHitRate(p.hit)}</td>
              {hasBand && (
                <td>
                  {bound(p.bytes) ? `from ${formatHitRate(p.lo ?? p.hit)}` : `${formatHitRate(p.lo ?? p.hit)} – ${formatHitRate(p.hi ?? p.hit)}`}
                </td>
              )}
              {pricePerGbMonth !== null && <td>{formatMoney(monthlyCost(p.bytes, pricePerGbMonth), currency)}</td>}
              <td>{i === cur ? "≈ today" : i === tgt ? "≈ target" : bound(p.bytes) ? "not observed yet" : ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
