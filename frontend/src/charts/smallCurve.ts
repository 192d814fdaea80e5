// One slab class's curve as a small multiple: shared y (0–100 %), its own memory axis, the
// class's current size marked. Minimal ink: a line, a marker, two labels.
import * as d3 from "d3";
import { curveSamples, type Curve } from "../lib/curve";
import { formatBytes } from "../lib/format";
import { sizedSvg, type Margin } from "./frame";

export type SmallCurveData = { points: Curve; currentBytes: number };
export type SmallCurveOptions = { width: number; height: number; margin: Margin };

/** Every k-th point (always the last), at most `max` of them. */
export function thin<T>(points: readonly T[], max: number): T[] {
  if (points.length <= max) return [...points];
  const k = Math.ceil(points.length / max);
  const out = points.filter((_, i) => i % k === 0);
  if (out[out.length - 1] !== points[points.length - 1]) out.push(points[points.length - 1]);
  return out;
}

export function drawSmallCurve(svgEl: SVGSVGElement, data: SmallCurveData, opts: SmallCurveOptions): void {
  const { width, height, margin: m } = opts;
  const last = data.points.length ? data.points[data.points.length - 1].bytes : 1;
  const x = d3
    .scaleLinear()
    .domain([0, Math.max(last, data.currentBytes, 1)])
    .range([m.left, width - m.right]);
  const y = d3
    .scaleLinear()
    .domain([0, 1])
    .range([height - m.bottom, m.top]);
  const svg = sizedSvg(svgEl, width, height);
  // A small multiple shows at most a point per ~3 px: thin the knots, no points between them.
  const pts = curveSamples(thin(data.points, Math.max(8, Math.floor((width - m.left - m.right) / 3))), 0);
  const line = d3
    .line<{ bytes: number; hit: number }>()
    .digits(1)
    .x((d) => x(d.bytes))
    .y((d) => y(d.hit));
  svg
    .selectAll("rect.frame")
    .data([null])
    .join("rect")
    .attr("class", "frame")
    .attr("x", m.left)
    .attr("y", m.top)
    .attr("width", width - m.left - m.right)
    .attr("height", height - m.top - m.bottom);
  svg.selectAll("path.curve").data([pts]).join("path").attr("class", "curve").attr("d", line);
  svg
    .selectAll("line.current")
    .data([data.currentBytes])
    .join("line")
    .attr("class", "current")
    .attr("x1", (d) => x(d))
    .attr("x2", (d) => x(d))
    .attr("y1", m.top)
    .attr("y2", height - m.bottom);
  svg
    .selectAll("text.tick")
    .data([
      { t: "0", x: m.left, a: "start" },
      { t: formatBytes(x.domain()[1]), x: width - m.right, a: "end" },
    ])
    .join("text")
    .attr("class", "tick")
    .attr("x", (d) => d.x)
    .attr("y", height - 2)
    .attr("text-anchor", (d) => d.a)
    .text((d) => d.t);
}
