import { expect, test } from "vitest";
import { drawAccuracyChart, type AccuracyDatum } from "./accuracyChart";

const margin = { top: 20, right: 20, bottom: 24, left: 50 };
const width = 650; // plot from 50 to 630 px

test("error bars stay inside the plot, the first and last cut at its edges", () => {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  document.body.appendChild(svg);
  const data: AccuracyDatum[] = [0, 1, 2, 3, 4, 5].map((h) => ({
    time: new Date(2026, 10, 26, 10 + h),
    measured: 0.8,
    predicted: 0.8 + (h % 2 ? 0.01 : -0.01),
  }));
  drawAccuracyChart(svg, data, { width, height: 300, margin });
  const bars = [...svg.querySelectorAll("rect.err")];
  expect(bars.length).toBe(6);
  for (const b of bars) {
    const x = Number(b.getAttribute("x"));
    const w = Number(b.getAttribute("width"));
    expect(x).toBeGreaterThanOrEqual(margin.left);
    expect(x + w).toBeLessThanOrEqual(width - margin.right + 1e-9);
    expect(w).toBeGreaterThan(0);
  }
  // a middle bar keeps its full width; the end bars are half as wide
  const widths = bars.map((b) => Number(b.getAttribute("width")));
  expect(widths[0]).toBeCloseTo(widths[2] / 2, 6);
  expect(widths[5]).toBeCloseTo(widths[2] / 2, 6);
});

test("a lone point, or points close in time, get narrow bars instead of a share of the plot", () => {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  document.body.appendChild(svg);
  // the first minutes of a server: one graded window, drawn in a 10-minute axis
  drawAccuracyChart(svg, [{ time: new Date(2026, 10, 26, 22, 14), measured: 0.55, predicted: 0.49 }], { width, height: 300, margin });
  const lone = Number(svg.querySelector("rect.err")!.getAttribute("width"));
  expect(lone).toBeGreaterThan(0);
  expect(lone).toBeLessThanOrEqual(12);
  // three windows 20 s apart at the start of a 10-minute axis: bars no wider than their spacing
  const t0 = new Date(2026, 10, 26, 22, 10).getTime();
  const data: AccuracyDatum[] = [0, 1, 2].map((i) => ({ time: new Date(t0 + i * 20_000), measured: 0.6, predicted: 0.62 }));
  data.push({ time: new Date(t0 + 600_000), measured: 0.6, predicted: 0.62 });
  drawAccuracyChart(svg, data, { width, height: 300, margin });
  const spacing = (20_000 / 600_000) * (width - margin.left - margin.right);
  for (const b of [...svg.querySelectorAll("rect.err")]) expect(Number(b.getAttribute("width"))).toBeLessThanOrEqual(spacing);
});
