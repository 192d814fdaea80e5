// The total monthly cost against memory (the cost answer's points): memory's cost, the misses'
// cost and their sum, the cost-optimal size with its band shaded, and today's point. A function
// of its data, scales and margins; drawn again with new data it updates the same elements.
import * as d3 from "d3";
import { formatMoney } from "../lib/format";
import { layers, memoryAxis, sizedSvg, type Margin } from "./frame";

export type CostPointDatum = { memory_bytes: number; memory: number; misses: number; total: number };
export type CostChartData = {
  points: CostPointDatum[];
  optimalBytes: number | null;
  bandMin: number | null;
  bandMax: number | null; // null: open-ended (past what is seen)
  today: CostPointDatum | null;
};
export type CostChartOptions = { width: number; height: number; margin: Margin };

const SERIES = [
  { key: "total", cls: "cost-total", label: "total" },
  { key: "memory", cls: "cost-memory", label: "memory" },
  { key: "misses", cls: "cost-misses", label: "misses" },
] as const;

/** The scales the chart draws with (exported so a test can check what lands where). */
export function costScales(data: CostChartData, opts: CostChartOptions) {
  const { width, height, margin: m } = opts;
  const xs = data.points.map((p) => p.memory_bytes);
  if (data.today) xs.push(data.today.memory_bytes);
  const x = d3
    .scaleLinear()
    .domain([0, d3.max(xs) ?? 1])
    .range([m.left, width - m.right]);
  const ys = data.points.flatMap((p) => [p.total, p.memory, p.misses]);
  if (data.today) ys.push(data.today.total);
  const y = d3
    .scaleLinear()
    .domain([0, (d3.max(ys) ?? 1) * 1.05 || 1])
    .range([height - m.bottom, m.top])
    .nice();
  return { x, y };
}

export function drawCostChart(svgEl: SVGSVGElement, data: CostChartData, opts: CostChartOptions): void {
  const { width, height, margin: m } = opts;
  const { x, y } = costScales(data, opts);
  const svg = sizedSvg(svgEl, width, height);
  const layer = layers(svg);
  const hi = data.bandMax ?? x.domain()[1];
  layer("band")
    .selectAll("rect")
    .data(data.bandMin !== null ? [[data.bandMin, hi]] : [])
    .join("rect")
    .attr("class", "cost-band")
    .attr("x", (d) => x(d[0]))
    .attr("width", (d) => Math.max(1, x(d[1]) - x(d[0])))
    .attr("y", m.top)
    .attr("height", height - m.top - m.bottom);
  memoryAxis(layer("x-axis"), x, m, height);
  layer("y-axis")
    .attr("transform", `translate(${m.left},0)`)
    .call(
      d3
        .axisLeft(y)
        .ticks(4)
        .tickFormat((d) => formatMoney(+d)),
    );
  for (const s of SERIES) {
    const line = d3
      .line<CostPointDatum>()
      .x((p) => x(p.memory_bytes))
      .y((p) => y(p[s.key]));
    layer(s.cls).selectAll("path").data([data.points]).join("path").attr("class", s.cls).attr("d", line);
  }
  layer("optimum")
    .selectAll("line")
    .data(data.optimalBytes !== null ? [data.optimalBytes] : [])
    .join("line")
    .attr("class", "cost-optimum")
    .attr("x1", (d) => x(d))
    .attr("x2", (d) => x(d))
    .attr("y1", m.top)
    .attr("y2", height - m.bottom);
  layer("today")
    .selectAll("circle")
    .data(data.today ? [data.today] : [])
    .join("circle")
    .attr("class", "cost-today")
    .attr("r", 4)
    .attr("cx", (d) => x(d.memory_bytes))
    .attr("cy", (d) => y(d.total));
  layer("legend")
    .selectAll("text")
    .data(SERIES)
    .join("text")
    .attr("class", (d) => `axis-label ${d.cls}-label`)
    .attr("x", (_, i) => m.left + 8 + i * 70)
    .attr("y", m.top - 8)
    .text((d) => d.label);
}
