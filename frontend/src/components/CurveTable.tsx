import { useState } from "react";
import type { Curve } from "../lib/curve";
import { monthlyCost } from "../lib/curve";
import { curveCsv, curveRows } from "../lib/curveCsv";
import { formatBytes, formatMoney, formatHitRate } from "../lib/format";
import { TableScroll } from "./TableScroll";

/** Put text on the clipboard: the Clipboard API where the page may use it (a secure context),
 *  else the copy command (a dashboard served over plain http), the text set in its copy event
 *  (a textarea's own value would turn the CSV's CRLF line ends into LF) over a selected textarea. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // refused (no permission): try the copy command
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  const exact = (e: ClipboardEvent) => {
    e.clipboardData?.setData("text/plain", text);
    e.preventDefault();
  };
  document.addEventListener("copy", exact);
  try {
    return document.execCommand("copy");
  } catch {
    return false;
  } finally {
    document.removeEventListener("copy", exact);
    area.remove();
  }
}

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
  fileName = "curve.csv",
}: {
  points: Curve;
  currentBytes: number;
  targetBytes: number | null;
  pricePerGbMonth: number | null;
  currency: string;
  observedMaxBytes?: number | null;
  /** The downloaded file's name. */
  fileName?: string;
}) {
  const rows = curveRows(points, currentBytes, targetBytes, observedMaxBytes);
  const hasBand = points.some((p) => p.lo !== undefined);
  const [copied, setCopied] = useState<"" | "copied" | "failed">("");
  const csv = () => curveCsv(rows, pricePerGbMonth, currency);
  const copy = async () => {
    setCopied((await copyText(csv())) ? "copied" : "failed");
    setTimeout(() => setCopied(""), 2500);
  };
  const download = () => {
    const url = URL.createObjectURL(new Blob([csv()], { type: "text/csv;charset=utf-8" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = fileName;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  };
  return (
    <>
    <div className="row curve-csv">
      <button type="button" onClick={copy} data-testid="curve-copy-csv">
        {copied === "copied" ? "Copied" : copied === "failed" ? "Copy refused: use Download CSV" : "Copy as CSV"}
      </button>
      <button type="button" onClick={download} data-testid="curve-download-csv">
        Download CSV
      </button>
    </div>
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
          {rows.map(({ point: p, bound, mark }) => (
            <tr
              key={p.bytes}
              data-bytes={p.bytes}
              data-hit={p.hit}
              data-bound={bound ? "at-least" : undefined}
              className={[mark === "today" ? "is-current" : mark === "target" ? "is-target" : "", bound ? "is-unobserved" : ""].join(" ").trim() || undefined}
            >
              <td>{formatBytes(p.bytes)}</td>
              <td>{bound ? `at least ${formatHitRate(p.hit)}` : formatHitRate(p.hit)}</td>
              {hasBand && (
                <td>
                  {bound ? `from ${formatHitRate(p.lo ?? p.hit)}` : `${formatHitRate(p.lo ?? p.hit)} – ${formatHitRate(p.hi ?? p.hit)}`}
                </td>
              )}
              {pricePerGbMonth !== null && <td>{formatMoney(monthlyCost(p.bytes, pricePerGbMonth), currency)}</td>}
              <td>{mark ? `≈ ${mark}` : bound ? "not observed yet" : ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
    </>
  );
}
