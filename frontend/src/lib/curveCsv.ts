// The curve table's rows, shared by the table on the curve page and its CSV (copy and download):
// one row per curve point, today's size and the answer marked, points past what the agent has
// observed marked as lower bounds. The CSV carries plain numbers in their units (bytes, hit
// ratio from 0 to 1, money per month) so a spreadsheet reads them without parsing "1.5 GiB".
import { monthlyCost, type Curve, type CurvePoint } from "./curve";

export type CurveRow = {
  point: CurvePoint;
  /** Past the agent's observed range: the hit rate is a lower bound. */
  bound: boolean;
  mark: "today" | "target" | null;
};

/** The table's rows: the point nearest today's size is "today", the one nearest the answer "target". */
export function curveRows(points: Curve, currentBytes: number, targetBytes: number | null, observedMaxBytes: number | null): CurveRow[] {
  const nearest = (b: number | null) =>
    b === null || !points.length
      ? -1
      : points.reduce((best, p, i) => (Math.abs(p.bytes - b) < Math.abs(points[best].bytes - b) ? i : best), 0);
  const cur = nearest(currentBytes);
  const tgt = nearest(targetBytes);
  return points.map((point, i) => ({
    point,
    bound: observedMaxBytes !== null && point.bytes > observedMaxBytes * (1 + 1e-9),
    mark: i === cur ? "today" : i === tgt ? "target" : null,
  }));
}

/** A number as a CSV cell: at most `digits` decimals, no trailing zeros, no exponent. */
function num(v: number, digits: number): string {
  return Number(v.toFixed(digits)).toString();
}

/** RFC 4180 quoting: a cell with a comma, quote or line break is quoted, quotes doubled. */
function cell(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The curve table as CSV (RFC 4180, CRLF line ends), headers naming each column's unit. */
export function curveCsv(rows: CurveRow[], pricePerGbMonth: number | null, currency: string): string {
  const hasBand = rows.some((r) => r.point.lo !== undefined);
  const head = ["memory (bytes)", "hit ratio (0 to 1)"];
  if (hasBand) head.push("band low (hit ratio)", "band high (hit ratio)");
  if (pricePerGbMonth !== null) head.push(`cost per month (${currency})`);
  head.push("observed", "note");
  const lines = [head.map(cell).join(",")];
  for (const { point: p, bound, mark } of rows) {
    const out = [String(Math.round(p.bytes)), num(p.hit, 6)];
    if (hasBand) out.push(num(p.lo ?? p.hit, 6), bound ? "" : num(p.hi ?? p.hit, 6));
    if (pricePerGbMonth !== null) out.push(num(monthlyCost(p.bytes, pricePerGbMonth), 2));
    out.push(bound ? "no" : "yes");
    out.push([mark ?? "", bound ? "not observed yet: the hit ratio is a lower bound" : ""].filter(Boolean).join("; "));
    lines.push(out.map(cell).join(","));
  }
  return lines.join("\r\n") + "\r\n";
}
