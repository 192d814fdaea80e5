// Measured versus predicted hit rate over time (top), and the prediction error in percentage
// points (bottom bars): how right the curve has been on this server.
import * as d3 from "d3";
import { dayTicks, formatPp, timeAxisDomain, timeTickFormat } from "../lib/format";
import { hitRateAxis, layers, sizedSvg, type Margin } from "./frame";

export type AccuracyDatum = { time: Date; measured: number | null; predicted: number | null };
export type AccuracyOptions = { width: number; height: number; margin: Margin };

export function drawAccuracyChart(svgEl: SVGSVGElement, data: AccuracyDatum[], opts: AccuracyOptions): void {
  const { width, height, margin: m } = opts;
  const errH = Math.round((height - m.top - m.bottom) * 0.32);
  const gap = 26;
  const topBottom = height - m.bottom - errH - gap;
  const dom = timeAxisDomain(data.map((d) => d.time));
  const x = d3.scaleTime().domain(dom).range([m.left, width - m.right]);
  const tickFmt = timeTickFormat(dom);
  const values = data.flatMap((d) => [d.measured, d.predicted]).filter((v): v is number => v !== null);
  const lo = values.length ? Math.max(0, Math.floor((d3.min(values)! - 0.02) * 20) / 20) : 0;
  const hi = values.length ? Math.min(1, Math.ceil((d3.max(values)! + 0.02) * 20) / 20) : 1;
  const y = d3.scaleLinear().domain([lo, hi]).range([topBottom, m.top]);
  const errors = data.map((d) => (d.measured !== null && d.predicted !== null ? d.predicted - d.measured : null));
  const maxErr = Math.max(0.01, d3.max(errors, (e) => (e === null ? 0 : Math.abs(e))) ?? 0.01);
  const ye = d3
    .scaleLinear()
    .domain([-maxErr, maxErr])
    .range([height - m.bottom, height - m.bottom - errH]);

  const svg = sizedSvg(svgEl, width, height);
  const layer = layers(svg);
  const nTicks = Math.max(2, Math.round((width - m.left - m.right) / 100));
  const xAxis = d3.axisBottom(x).tickFormat((d) => tickFmt(d as Date));
  const days = dayTicks(dom, nTicks); // across days, one tick a day at most: no date twice
  layer("x-axis")
    .attr("transform", `translate(0,${height - m.bottom})`)
    .call(days ? xAxis.tickValues(days) : xAxis.ticks(nTicks));
  hitRateAxis(layer("y-axis"), y, m, 4);
  layer("e-axis")
    .attr("transform", `translate(${m.left},0)`)
    .call(
      d3
        .axisLeft(ye)
        .ticks(3)
        .tickFormat((d) => formatPp(+d, 1)),
    );
  layer("labels")
    .selectAll("text")
    .data([
      { t: "hit rate: measured (dots) and predicted (line)", y: m.top - 8 },
      { t: "error: predicted − measured", y: height - m.bottom - errH - 8 },
    ])
    .join("text")
    .attr("class", "axis-label")
    .attr("x", m.left)
    .attr("y", (d) => d.y)
    .text((d) => d.t);
  const predicted = d3
    .line<AccuracyDatum>()
    .defined((d) => d.predicted !== null)
    .x((d) => x(d.time))
    .y((d) => y(d.predicted!));
  layer("predicted").selectAll("path").data([data]).join("path").attr("class", "predicted").attr("d", predicted);
  layer("measured")
    .selectAll("circle")
    .data(data.filter((d) => d.measured !== null))
    .join("circle")
    .attr("class", "measured-dot")
    .attr("r", 2.5)
    .attr("cx", (d) => x(d.time))
    .attr("cy", (d) => y(d.measured!));
  // A bar is as wide as the spacing of its points allows (70 % of the closest pair), never a share
  // of the plot: a lone point in the first minutes drew one bar over 70 % of the width.
  const xs = data.map((d) => x(d.time)).sort((a, b) => a - b);
  const gaps = xs.slice(1).map((v, i) => v - xs[i]).filter((g) => g > 0);
  const bw = Math.max(1, 0.7 * Math.min((width - m.left - m.right) / Math.max(1, data.length), gaps.length ? Math.min(...gaps) : 12));
  layer("errors")
    .selectAll("rect")
    .data(data.map((d, i) => ({ time: d.time, e: errors[i] })).filter((d) => d.e !== null))
    .join("rect")
    .attr("class", (d) => (d.e! > 0 ? "err over" : "err under"))
    // the first and last bars are cut at the plot's edges, not drawn past the axis
    .attr("x", (d) => Math.max(m.left, x(d.time) - bw / 2))
    .attr("width", (d) => Math.max(0, Math.min(width - m.right, x(d.time) + bw / 2) - Math.max(m.left, x(d.time) - bw / 2)))
    .attr("y", (d) => Math.min(ye(0), ye(d.e!)))
    .attr("height", (d) => Math.abs(ye(d.e!) - ye(0)));
  layer("zero")
    .selectAll("line")
    .data([0])
    .join("line")
    .attr("class", "zero")
    .attr("x1", m.left)
    .attr("x2", width - m.right)
    .attr("y1", ye(0))
    .attr("y2", ye(0));
}
