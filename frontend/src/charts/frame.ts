// What every chart here shares: the sized SVG, its named layers, the hit-rate grid and the
// memory and hit-rate axes. Plain functions of scales and margins; they keep no state, so a
// chart drawn again with new data updates the same elements (D3 joins keyed by name).
import * as d3 from "d3";
import { byteTickFormat, byteTicks, formatHitRate } from "../lib/format";

export type Margin = { top: number; right: number; bottom: number; left: number };
type Layer = d3.Selection<SVGGElement, string, SVGSVGElement, unknown>;
type Svg = d3.Selection<SVGSVGElement, unknown, null, undefined>;

/** The SVG at its size, with a viewBox so CSS may scale it. */
export function sizedSvg(svgEl: SVGSVGElement, width: number, height: number): Svg {
  return d3.select(svgEl).attr("width", width).attr("height", height).attr("viewBox", `0 0 ${width} ${height}`);
}

/** One group per layer name, created on first use (so in drawing order), found again after. */
export function layers(svg: Svg): (name: string) => Layer {
  return (name) =>
    svg
      .selectAll<SVGGElement, string>(`g.layer-${name}`)
      .data([name])
      .join("g")
      .attr("class", `layer-${name}`);
}

/** Horizontal grid lines at the hit-rate ticks, across the plot. */
export function hitRateGrid(g: Layer, y: d3.ScaleLinear<number, number>, m: Margin, width: number, cls = "grid"): void {
  g.selectAll("line")
    .data(y.ticks(5))
    .join("line")
    .attr("class", cls)
    .attr("x1", m.left)
    .attr("x2", width - m.right)
    .attr("y1", (d) => y(d))
    .attr("y2", (d) => y(d));
}

/** The memory axis at the bottom: byte ticks about every 90 px, units fitted to the range. */
export function memoryAxis(g: Layer, x: d3.ScaleLinear<number, number>, m: Margin, height: number): void {
  const [lo, hi] = x.domain();
  const plotW = Math.abs(x.range()[1] - x.range()[0]);
  g.attr("transform", `translate(0,${height - m.bottom})`).call(
    d3
      .axisBottom(x)
      .tickValues(byteTicks(lo, hi, Math.max(2, Math.round(plotW / 90))))
      .tickFormat((d) => byteTickFormat(lo, hi)(+d)),
  );
}

/** The hit-rate axis on the left, in whole percent. */
export function hitRateAxis(g: Layer, y: d3.ScaleLinear<number, number>, m: Margin, ticks = 5): void {
  g.attr("transform", `translate(${m.left},0)`).call(
    d3
      .axisLeft(y)
      .ticks(ticks)
      .tickFormat((d) => formatHitRate(+d)),
  );
}
