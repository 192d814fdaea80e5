import { describe, expect, it } from "vitest";
import { costScales, drawCostChart, type CostChartData } from "./costChart";

const MIB = 1024 * 1024;
const data: CostChartData = {
  points: [
    { memory_bytes: 16 * MIB, memory: 1, misses: 9, total: 10 },
    { memory_bytes: 64 * MIB, memory: 4, misses: 2, total: 6 },
    { memory_bytes: 128 * MIB, memory: 8, misses: 1, total: 9 },
  ],
  optimalBytes: 64 * MIB,
  bandMin: 48 * MIB,
  bandMax: 80 * MIB,
  today: { memory_bytes: 128 * MIB, memory: 8, misses: 1, total: 9 },
};
const opts = { width: 600, height: 300, margin: { top: 24, right: 24, bottom: 34, left: 64 } };

describe("cost chart", () => {
  it("draws the three costs, the optimum, its band and today where the scales put them", () => {
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    drawCostChart(svg, data, opts);
    const { x, y } = costScales(data, opts);
    expect(x.range()).toEqual([64, 576]);
    expect(y.range()).toEqual([266, 24]);
    for (const cls of ["cost-total", "cost-memory", "cost-misses"]) {
      expect(svg.querySelector(`path.${cls}`)?.getAttribute("d")).toMatch(/^M/);
    }
    const opt = svg.querySelector("line.cost-optimum")!;
    expect(Number(opt.getAttribute("x1"))).toBeCloseTo(x(64 * MIB));
    const band = svg.querySelector("rect.cost-band")!;
    expect(Number(band.getAttribute("x"))).toBeCloseTo(x(48 * MIB));
    expect(Number(band.getAttribute("width"))).toBeCloseTo(x(80 * MIB) - x(48 * MIB));
    const today = svg.querySelector("circle.cost-today")!;
    expect(Number(today.getAttribute("cy"))).toBeCloseTo(y(9));
    // drawn again without an optimum: the marker goes, the same paths stay
    drawCostChart(svg, { ...data, optimalBytes: null, bandMin: null }, opts);
    expect(svg.querySelector("line.cost-optimum")).toBeNull();
    expect(svg.querySelectorAll("path.cost-total")).toHaveLength(1);
  });
});
