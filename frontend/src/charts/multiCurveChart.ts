// Several curves on one memory axis: policies side by side, or one curve per day of history.
// Each series carries its own colour; a legend is the caller's (an HTML list reads better).
import * as d3 from "d3";
import { curveSamples, type Curve } from "../lib/curve";
import { formatBytes } from "../lib/format";
import { hitRateAxis, hitRateGrid, layers, memoryAxis, sizedSvg, type Margin } from "./frame";

// `raw`: drawn straight through its points (a what-if that rises and falls); otherwise as a
// hit-rate curve (monotone interpolation, non-decreasing).
export type Series = { key: string; label: string; color: string; points: Curve; dashed?: boolean; opacity?: number; raw?: boolean };
export type MultiCurveOptions = { width: number; height: number; margin: Margin; currentBytes: number | null; xTitle?: string; currentLabel?: string };

export function drawMultiCurveChart(svgEl: SVGSVGElement, series: Series[], opts: MultiCurveOptions): void {
  const { width, height, margin: m } = opts;
  const maxBytes = d3.max(series, (s) => d3.max(s.points, (p) => p.bytes)) ?? 1;
  const x = d3
    .scaleLinear()
    .domain([0, Math.max(maxBytes, opts.currentBytes ?? 0, 1)])
    .range([m.left, width - m.right]);
  const y = d3
    .scaleLinear()
    .domain([0, 1])
    .range([height - m.bottom, m.top]);
  const svg = sizedSvg(svgEl, width, height);
  const layer = layers(svg);
  hitRateGrid(layer("grid"), y, m, width);
  memoryAxis(layer("x-axis"), x, m, height);
  hitRateAxis(layer("y-axis"), y, m);
  layer("current")
    .selectAll("line")
    .data(opts.currentBytes === null ? [] : [opts.currentBytes])
    .join("line")
    .attr("class", "current")
    .attr("x1", (d) => x(d))
    .attr("x2", (d) => x(d))
    .attr("y1", m.top)
    .attr("y2", height - m.bottom);
  // axis titles and a labelled now-line: the chart reads without the page around it
  layer("titles")
    .selectAll("text")
    .data([
      { t: opts.xTitle ?? "memory", x: width - m.right, y: height - 2, anchor: "end" },
      { t: "hit rate", x: m.left, y: m.top - 4, anchor: "start" },
    ])
    .join("text")
    .attr("class", "axis-title")
    .attr("x", (d) => d.x)
    .attr("y", (d) => d.y)
    .attr("text-anchor", (d) => d.anchor)
    .text((d) => d.t);
  layer("current")
    .selectAll("text")
    .data(opts.currentBytes === null ? [] : [opts.currentBytes])
    .join("text")
    .attr("class", "now-label")
    .attr("x", (d) => x(d) + 4)
    .attr("y", height - m.bottom - 6)
    .text((d) => `${opts.currentLabel ?? "now"} ${formatBytes(d)}`);
  const line = d3
    .line<{ bytes: number; hit: number }>()
    .x((d) => x(d.bytes))
    .y((d) => y(d.hit));
  layer("series")
    .selectAll<SVGPathElement, Series>("path")
    .data(series, (s) => s.key)
    .join("path")
    .attr("class", "series")
    .attr("data-key", (s) => s.key)
    .attr("stroke", (s) => s.color)
    .attr("stroke-dasharray", (s) => (s.dashed ? "5 4" : null))
    .attr("stroke-opacity", (s) => s.opacity ?? 1)
    .attr("d", (s) => line(s.raw ? s.points : curveSamples(s.points)))
    .selectAll("title")
    .data((s) => [s.label])
    .join("title")
    .text((d) => d);
}
