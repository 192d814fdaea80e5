// The hit-rate curve chart: hit ratio (y) versus memory (x). A function of its data and options:
// call it again with new data and it updates the same SVG (D3 joins keyed by role); it keeps
// no state of its own. Zoom, hover and the target live with the caller, who passes them back in.
import * as d3 from "d3";
import type { Curve } from "../lib/curve";
import { bandAt, curveSamples, hitAtClamped } from "../lib/curve";
import { formatBytes, formatHitRate } from "../lib/format";
import { hitRateAxis, hitRateGrid, layers, memoryAxis, sizedSvg, type Margin } from "./frame";

export type { Margin };

export type CurveChartData = {
  /** Calibrated curve; band edges in lo/hi. */
  points: Curve;
  /** The uncalibrated estimate, drawn dashed when present. */
  estimate?: Curve | null;
  currentBytes: number;
  measuredHit: number | null;
  /** Target hit ratio and where it meets the curve (null: the curve does not reach it). */
  target: number | null;
  targetBytes: number | null;
  /** Memory under the pointer, for the readout. */
  hoverBytes: number | null;
  /** Past this memory the agent has seen nothing yet (memcached still filling: nothing evicted, so
   * nothing asked again after eviction). The curve there is drawn faded and labelled, not as fact. */
  observedMaxBytes?: number | null;
};

export type CurveChartOptions = {
  width: number;
  height: number;
  margin: Margin;
  /** Unique id, for the clip path. */
  id: string;
  /** Zoomed memory range; null shows the whole curve. */
  xDomain: [number, number] | null;
  onTarget?: (hit: number) => void;
  onZoom?: (domain: [number, number] | null) => void;
  onHover?: (bytes: number | null) => void;
};

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** Where a label's text starts or ends (its anchor) and its baseline. */
export type LabelAt = { x: number; y: number; anchor: "start" | "end" };
/** A label's box, estimated: about 6.6 px a character at the chart's 11 px, 11 px above its
 *  baseline and 3 below. Never measured, so the same data places every label the same way in a
 *  test as in the browser. */
export type Box = { x0: number; x1: number; y0: number; y1: number };
export function labelBox(at: LabelAt, text: string): Box {
  const w = text.length * 6.6 + 2;
  const x0 = at.anchor === "start" ? at.x : at.x - w;
  return { x0, x1: x0 + w, y0: at.y - 11, y1: at.y + 3 };
}
const meet = (a: Box, b: Box, pad = 2) => a.x0 <= b.x1 + pad && a.x1 >= b.x0 - pad && a.y0 <= b.y1 + pad && a.y1 >= b.y0 - pad;

export const UNOBSERVED_TEXT = "not observed yet";

/** Where "not observed yet" goes: at the bottom of the shaded part of the plot, from its left
 *  edge; when the shaded part is narrower than the label, right-aligned at the plot's right edge
 *  (it then reaches back over the observed part as little as it can). It once ended 6 px right of
 *  the shade's edge whatever its width, and at 390 px ran under "now 64 MiB". */
export function unobservedLabelPlace(unseenX: number, m: Margin, width: number, height: number): LabelAt {
  const right = width - m.right - 4;
  const y = height - m.bottom - 8;
  const start: LabelAt = { x: unseenX + 6, y, anchor: "start" };
  return labelBox(start, UNOBSERVED_TEXT).x1 <= right ? start : { x: right, y, anchor: "end" };
}

/** Where the "now" label goes: beside the now-line at the top or the bottom of the plot, on
 *  whichever side the curve (with its band), the target line and the other labels (`labels`: their
 *  boxes, labelBox) leave free; it never covers another label while one place does not. At the top
 *  right only, at 390 px the curve's plateau ran through it on the cluster page. */
export function nowLabelPlace(
  data: CurveChartData,
  text: string,
  x: d3.ScaleLinear<number, number>,
  y: d3.ScaleLinear<number, number>,
  m: Margin,
  width: number,
  height: number,
  labels: Box[],
): LabelAt {
  const xc = x(data.currentBytes);
  const top = m.top + 10;
  const bottom = height - m.bottom - 6;
  const candidates: LabelAt[] = [
    { x: xc + 4, y: top, anchor: "start" },
    { x: xc - 4, y: top, anchor: "end" },
    { x: xc + 4, y: bottom, anchor: "start" },
    { x: xc - 4, y: bottom, anchor: "end" },
  ];
  const hits = (c: LabelAt) => {
    const { x0, x1, y0, y1 } = labelBox(c, text);
    if (x0 < m.left || x1 > width - m.right) return Infinity;
    const over = (a0: number, a1: number) => a0 <= y1 + 2 && a1 >= y0 - 2;
    let n = 0;
    for (let px = x0; px <= x1; px += 2) {
      const bytes = x.invert(px);
      const band = bandAt(data.points, bytes);
      const h = hitAtClamped(data.points, bytes);
      if (over(y(band ? band.hi : h), y(band ? band.lo : h))) n++;
    }
    const t = data.target;
    if (t !== null) {
      const tx = data.targetBytes !== null ? x(data.targetBytes) : width - m.right;
      if (over(y(t), y(t)) && x0 <= tx) n += 10;
      if (data.targetBytes !== null && tx >= x0 && tx <= x1 && over(y(t), height - m.bottom)) n += 10;
    }
    // a label over a label reads as neither: worse than any line under it
    for (const b of labels) if (meet({ x0, x1, y0, y1 }, b)) n += 1000;
    return n;
  };
  let best = candidates[0];
  let fewest = Infinity;
  for (const c of candidates) {
    const n = hits(c);
    if (n < fewest) [best, fewest] = [c, n];
    if (n === 0) break;
  }
  return best;
}

/** The memory range the chart shows when not zoomed: the curve, the allocation and the answer. */
export function fullXDomain(data: Pick<CurveChartData, "points" | "currentBytes" | "targetBytes">): [number, number] {
  const last = data.points.length ? data.points[data.points.length - 1].bytes : 1;
  return [0, Math.max(last, data.currentBytes, data.targetBytes ?? 0, 1)];
}

/** y range: the whole [0, 1] unless zoomed, then fitted to what is visible (5-point steps). */
export function yDomainFor(data: CurveChartData, xDomain: [number, number] | null): [number, number] {
  if (!xDomain) return [0, 1];
  const vis = data.points.filter((p) => p.bytes >= xDomain[0] && p.bytes <= xDomain[1]);
  const values = [
    hitAtClamped(data.points, xDomain[0]),
    hitAtClamped(data.points, xDomain[1]),
    ...vis.map((p) => p.lo ?? p.hit),
    ...vis.map((p) => p.hi ?? p.hit),
  ];
  if (data.target !== null) values.push(data.target);
  if (data.measuredHit !== null && data.currentBytes >= xDomain[0] && data.currentBytes <= xDomain[1]) {
    values.push(data.measuredHit);
  }
  const lo = Math.floor((Math.min(...values) - 0.02) * 20) / 20;
  const hi = Math.ceil((Math.max(...values) + 0.02) * 20) / 20;
  return [clamp(lo, 0, 0.95), clamp(Math.max(hi, lo + 0.05), 0.05, 1)];
}

export function drawCurveChart(svgEl: SVGSVGElement, data: CurveChartData, opts: CurveChartOptions): void {
  const { width, height, margin: m } = opts;
  const xDom = opts.xDomain ?? fullXDomain(data);
  const yDom = yDomainFor(data, opts.xDomain);
  const x = d3.scaleLinear().domain(xDom).range([m.left, width - m.right]);
  const y = d3.scaleLinear().domain(yDom).range([height - m.bottom, m.top]);
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;

  const svg = sizedSvg(svgEl, width, height);
  const layer = layers(svg);

  const clipId = `clip-${opts.id}`;
  svg
    .selectAll("defs")
    .data([null])
    .join("defs")
    .selectAll("clipPath")
    .data([null])
    .join("clipPath")
    .attr("id", clipId)
    .selectAll("rect")
    .data([null])
    .join("rect")
    .attr("x", m.left)
    .attr("y", m.top - 2)
    .attr("width", Math.max(0, plotW))
    .attr("height", Math.max(0, plotH + 4));

  // Axes and grid.
  hitRateGrid(layer("grid"), y, m, width, "gy grid");
  memoryAxis(layer("x-axis"), x, m, height);
  hitRateAxis(layer("y-axis"), y, m);
  layer("labels")
    .selectAll("text.axis-label")
    .data([
      { k: "x", t: "memory", x: width - m.right, y: height - 6, a: "end" },
      { k: "y", t: "hit rate", x: m.left, y: m.top - 8, a: "start" },
    ])
    .join("text")
    .attr("class", "axis-label")
    .attr("x", (d) => d.x)
    .attr("y", (d) => d.y)
    .attr("text-anchor", (d) => d.a)
    .text((d) => d.t);

  // Band, estimate and calibrated curve, clipped to the plot.
  const plot = layer("plot").attr("clip-path", `url(#${clipId})`);
  // Lines follow the same monotone interpolation the sizing API answers from (lib/pchip.ts).
  // About one sample per 2 px of the visible range (knots always kept).
  const zoomFactor = (fullXDomain(data)[1] - 0) / Math.max(1, xDom[1] - xDom[0]);
  const perSegment = Math.round(clamp((plotW * zoomFactor) / (2 * Math.max(1, data.points.length)), 1, 12));
  const pts = curveSamples(data.points, perSegment);
  const hasBand = data.points.some((p) => p.lo !== undefined || p.hi !== undefined);
  const bandPts = hasBand ? pts.map((p) => ({ bytes: p.bytes, ...(bandAt(data.points, p.bytes) ?? { lo: p.hit, hi: p.hit }) })) : [];
  const area = d3
    .area<(typeof bandPts)[number]>()
    .digits(1)
    .x((d) => x(d.bytes))
    .y0((d) => y(d.lo))
    .y1((d) => y(d.hi));
  const line = d3
    .line<{ bytes: number; hit: number }>()
    .digits(1)
    .x((d) => x(d.bytes))
    .y((d) => y(d.hit));
  plot
    .selectAll("path.band")
    .data(hasBand ? [bandPts] : [])
    .join("path")
    .attr("class", "band")
    .attr("d", area);
  plot
    .selectAll("path.estimate")
    .data(data.estimate && data.estimate.length ? [curveSamples(data.estimate, perSegment)] : [])
    .join("path")
    .attr("class", "estimate")
    .attr("d", line);
  const seen = data.observedMaxBytes ?? Infinity;
  const solid = pts.filter((p) => p.bytes <= seen);
  const faded = seen < Infinity ? pts.filter((p) => p.bytes >= seen) : [];
  if (faded.length && solid.length && faded[0].bytes > seen) faded.unshift({ ...solid[solid.length - 1] });
  plot.selectAll("path.curve").data([solid]).join("path").attr("class", "curve").attr("d", line);
  plot.selectAll("path.curve-unobserved").data(faded.length > 1 ? [faded] : []).join("path").attr("class", "curve-unobserved").attr("d", line);
  // The unobserved region: shaded from the last observed memory to the right edge, labelled.
  const unseen = seen < xDom[1] ? [Math.max(seen, xDom[0])] : [];
  plot
    .selectAll("rect.unobserved")
    .data(unseen)
    .join("rect")
    .attr("class", "unobserved")
    .attr("x", (d) => x(d))
    .attr("y", m.top)
    .attr("width", (d) => Math.max(0, width - m.right - x(d)))
    .attr("height", Math.max(0, plotH));
  const unseenAt = unseen.map((d) => unobservedLabelPlace(x(d), m, width, height));
  layer("unobserved-label")
    .selectAll("text.unobserved-label")
    .data(unseenAt)
    .join("text")
    .attr("class", "unobserved-label")
    .attr("x", (d) => d.x)
    .attr("y", (d) => d.y)
    .attr("text-anchor", (d) => d.anchor)
    .text(UNOBSERVED_TEXT);

  // Current allocation and the measured hit rate.
  const marks = layer("marks").attr("clip-path", `url(#${clipId})`);
  marks
    .selectAll("line.current")
    .data([data.currentBytes])
    .join("line")
    .attr("class", "current")
    .attr("x1", (d) => x(d))
    .attr("x2", (d) => x(d))
    .attr("y1", m.top)
    .attr("y2", height - m.bottom);
  const nowText = `now ${formatBytes(data.currentBytes)}`;
  const nowAt = nowLabelPlace(data, nowText, x, y, m, width, height, unseenAt.map((at) => labelBox(at, UNOBSERVED_TEXT)));
  marks
    .selectAll("text.current-label")
    .data([data.currentBytes])
    .join("text")
    .attr("class", "current-label")
    .attr("x", nowAt.x)
    .attr("y", nowAt.y)
    .attr("text-anchor", nowAt.anchor)
    .text(nowText);
  marks
    .selectAll("circle.measured")
    .data(data.measuredHit === null ? [] : [data.measuredHit])
    .join("circle")
    .attr("class", "measured")
    .attr("r", 5)
    .attr("cx", x(data.currentBytes))
    .attr("cy", (d) => y(d))
    .append("title")
    .text((d) => `measured ${formatHitRate(d)} at ${formatBytes(data.currentBytes)}`);

  // The target: a horizontal line to where it meets the curve, then down to the memory axis.
  const t = data.target;
  const meets = t !== null && data.targetBytes !== null;
  const tx = meets ? x(data.targetBytes!) : width - m.right;
  const answer = layer("answer").attr("clip-path", `url(#${clipId})`);
  // red (unreachable) only where the curve was seen out to its end: past what was observed the
  // answer is "unknown until ...", and a red line beside those words said "unreachable"
  const unreachable = !meets && (data.observedMaxBytes ?? Infinity) >= fullXDomain(data)[1];
  answer
    .selectAll("path.target-line")
    .data(t === null ? [] : [t])
    .join("path")
    .attr("class", unreachable ? "target-line unreachable" : "target-line")
    .attr("d", (d) => `M${m.left},${y(d)}H${tx}` + (meets ? `V${height - m.bottom}` : ""));
  answer
    .selectAll("circle.target-point")
    .data(meets ? [t!] : [])
    .join("circle")
    .attr("class", "target-point")
    .attr("r", 5)
    .attr("cx", tx)
    .attr("cy", (d) => y(d));

  // Zoom: brush a memory range; double-click resets. The brush behaviour is made once per extent
  // and kept on its element, like d3 keeps a gesture's state there: re-applying it on every draw
  // (a hover redraws) would reset a brush in progress. Its listener is renewed each draw.
  const brushG = layer("brush");
  // never inverted: a box measured a few pixels wide for a moment (the demo's server page at
  // 390 px, 2 px) gave the brush's overlay a width of -94 and Chromium an error
  const extent: [[number, number], [number, number]] = [
    [m.left, m.top],
    [Math.max(m.left, width - m.right), Math.max(m.top, height - m.bottom)],
  ];
  const node = brushG.node() as SVGGElement & { __hcBrush?: { key: string; brush: d3.BrushBehavior<string> } };
  const key = extent.flat().join(",");
  if (node.__hcBrush?.key !== key) {
    node.__hcBrush = { key, brush: d3.brushX<string>().extent(extent) };
    brushG.call(node.__hcBrush.brush);
  }
  const brush = node.__hcBrush.brush;
  brush.on("end", (event: d3.D3BrushEvent<string>) => {
    if (!event.sourceEvent || !event.selection) return;
    const [a, b] = (event.selection as [number, number]).map((px) => x.invert(px));
    brushG.call(brush.move, null);
    if (x(b) - x(a) > 4) opts.onZoom?.([Math.max(0, a), b]);
  });
  // selectAll, not select: select would copy the group's datum onto the overlay, where the brush
  // keeps its own ({type: "overlay"}).
  brushG.selectAll(".overlay").on("dblclick", () => opts.onZoom?.(null));

  // The target handle: drag it up and down, or focus it and use the arrow keys.
  const handle = layer("handle");
  const hg = handle
    .selectAll<SVGGElement, number>("g.target-handle")
    .data(t === null ? [] : [t])
    .join((enter) => {
      const g = enter.append("g").attr("class", "target-handle").attr("tabindex", 0).attr("role", "slider");
      g.append("line").attr("class", "grab");
      g.append("rect").attr("class", "knob").attr("width", 44).attr("height", 20).attr("rx", 4);
      g.append("text").attr("class", "knob-label");
      return g;
    })
    .attr("transform", (d) => `translate(0,${y(d)})`)
    .attr("aria-label", "target hit rate")
    .attr("aria-valuemin", 0)
    .attr("aria-valuemax", 100)
    .attr("aria-valuenow", (d) => +(d * 100).toFixed(1))
    .attr("aria-valuetext", (d) => formatHitRate(d));
  hg.select("line.grab").attr("x1", m.left).attr("x2", width - m.right);
  hg.select("rect.knob").attr("x", width - m.right + 2).attr("y", -10);
  hg.select("text.knob-label")
    .attr("x", width - m.right + 24)
    .attr("y", 4)
    .attr("text-anchor", "middle")
    .text((d) => formatHitRate(d));
  hg.call(
    d3.drag<SVGGElement, number>().on("drag", (event) => {
      opts.onTarget?.(clamp(y.invert(event.y), yDom[0], Math.min(yDom[1], 0.999)));
    }),
  );
  hg.on("keydown", (event: KeyboardEvent, d) => {
    const step = event.shiftKey ? 0.01 : 0.001;
    const delta = event.key === "ArrowUp" || event.key === "ArrowRight" ? step : event.key === "ArrowDown" || event.key === "ArrowLeft" ? -step : 0;
    if (delta) {
      event.preventDefault();
      opts.onTarget?.(clamp(Math.round((d + delta) * 1000) / 1000, 0, 0.999));
    }
  });

  // Readout: a rule at the pointer's memory and the curve's value there, for a mouse hovering and
  // for a finger touching (pointerdown: a tap sends no move). A finger's pointer leaves as it
  // lifts, so a touch readout stays until the next tap (outside the plot it clears); a mouse's
  // clears as the mouse leaves.
  const readAt = (event: PointerEvent) => {
    const [px] = d3.pointer(event, svgEl);
    opts.onHover?.(px < m.left || px > width - m.right ? null : x.invert(px));
  };
  svg.on("pointermove", readAt);
  svg.on("pointerdown", readAt);
  svg.on("pointerleave", (event: PointerEvent) => {
    if (event.pointerType !== "touch") opts.onHover?.(null);
  });
  const hb = data.hoverBytes;
  const readout = layer("readout").attr("pointer-events", "none");
  const hv = hb === null ? [] : [{ bytes: hb, hit: hitAtClamped(data.points, hb) }];
  readout
    .selectAll("line.hover-rule")
    .data(hv)
    .join("line")
    .attr("class", "hover-rule")
    .attr("x1", (d) => x(d.bytes))
    .attr("x2", (d) => x(d.bytes))
    .attr("y1", m.top)
    .attr("y2", height - m.bottom);
  readout
    .selectAll("circle.hover-dot")
    .data(hv)
    .join("circle")
    .attr("class", "hover-dot")
    .attr("r", 4)
    .attr("cx", (d) => x(d.bytes))
    .attr("cy", (d) => y(d.hit));
  const box = readout
    .selectAll<SVGGElement, (typeof hv)[number]>("g.hover-box")
    .data(hv)
    .join((enter) => {
      const g = enter.append("g").attr("class", "hover-box");
      g.append("rect").attr("rx", 4);
      g.append("text");
      return g;
    });
  box.each(function (d) {
    const g = d3.select(this);
    const text = `${formatBytes(d.bytes)} → ${formatHitRate(d.hit)}`;
    const w = text.length * 6.6 + 12;
    const left = x(d.bytes) + 8 + w > width - m.right ? x(d.bytes) - 8 - w : x(d.bytes) + 8;
    const top = clamp(y(d.hit) - 30, m.top, height - m.bottom - 22);
    g.attr("transform", `translate(${left},${top})`);
    g.select("rect").attr("width", w).attr("height", 22);
    g.select("text").attr("x", 6).attr("y", 15).text(text);
  });
}
