import type { Curve } from "../lib/curve";
import { monthlyCost } from "../lib/curve";
import { formatBytes, formatMoney, formatPercent } from "../lib/format";

/** The chart's numbers as a table: one row per curve point, today's size and the answer marked. */
export function CurveTable({
  points,
  currentBytes,
  targetBytes,
  pricePerGbMonth,
  currency,
}: {
  points: Curve;
  currentBytes: number;
  targetBytes: number | null;
  pricePerGbMonth: number | null;
  currency: string;
}) {
  const nearest = (b: number | null) =>
    b === null || !points.length
      ? -1
      : points.reduce((best, p, i) => (Math.abs(p.bytes - b) < Math.abs(points[best].bytes - b) ? i : best), 0);
  const cur = nearest(currentBytes);
  const tgt = nearest(targetBytes);
  const hasBand = points.some((p) => p.lo !== undefined);
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label="curve table">
      <table className="curve-table" data-testid="curve-table">
        <caption>
          Hit rate at each memory size{hasBand ? ", with the uncertainty band" : ""}. Today: {formatBytes(currentBytes)}.
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
            <tr key={p.bytes} data-bytes={p.bytes} data-hit={p.hit} className={i === cur ? "is-current" : i === tgt ? "is-target" : undefined}>
              <td>{formatBytes(p.bytes)}</td>
              <td>{formatPercent(p.hit, 2, false)}</td>
              {hasBand && (
                <td>
                  {formatPercent(p.lo ?? p.hit, 1, false)} – {formatPercent(p.hi ?? p.hit, 1, false)}
                </td>
              )}
              {pricePerGbMonth !== null && <td>{formatMoney(monthlyCost(p.bytes, pricePerGbMonth), currency)}</td>}
              <td>{i === cur ? "≈ today" : i === tgt ? "≈ target" : ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
