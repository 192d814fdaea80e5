import { expect, test, vi } from "vitest";
import { bytesForHit } from "../lib/curve";
import { drawCurveChart, fullXDomain, yDomainFor, type CurveChartData } from "./curveChart";

const GiB = 1024 ** 3;
const points = [1, 2, 3, 4, 5, 6, 7, 8].map((g) => ({ bytes: g * GiB, hit: g / 10, lo: g / 10 - 0.03, hi: g / 10 + 0.03 }));
const margin = { top: 20, right: 50, bottom: 30, left: 50 };
const width = 650; // plot 550 px wide
const height = 330; // plot 280 px tall

function draw(data: Partial<CurveChartData> = {}, xDomain: [number, number] | null = null, handlers = {}) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  document.body.appendChild(svg);
  const full: CurveChartData = {
    points, estimate: null, currentBytes: 4 * GiB, measuredHit: 0.41, target: 0.55, targetBytes: bytesForHit(points, 0.55),
    hoverBytes: null, ...data,
  };
  drawCurveChart(svg, full, { width, height, margin, id: "t", xDomain, ...handlers });
  return svg;
}

test("marks where the target meets the curve on the same scales as the axes", () => {
  const svg = draw();
  // x: 0..8 GiB over 50..600 px; y: 0..1 over 300..20 px. 55 % meets the line at 5.5 GiB.
  const dot = svg.querySelector("circle.target-point")!;
  expect(Number(dot.getAttribute("cx"))).toBeCloseTo(50 + (5.5 / 8) * 550, 6);
  expect(Number(dot.getAttribute("cy"))).toBeCloseTo(300 - 0.55 * 280, 6);
  const measured = svg.querySelector("circle.measured")!;
  expect(Number(measured.getAttribute("cx"))).toBeCloseTo(50 + (4 / 8) * 550, 6);
  expect(Number(measured.getAttribute("cy"))).toBeCloseTo(300 - 0.41 * 280, 6);
});

test("redrawing updates the same elements instead of adding more", () => {
  const svg = draw();
  const first = svg.querySelector("path.curve");
  drawCurveChart(svg, { points, estimate: null, currentBytes: 4 * GiB, measuredHit: 0.41, target: 0.3, targetBytes: 3 * GiB, hoverBytes: 2 * GiB }, { width, height, margin, id: "t", xDomain: null });
  expect(svg.querySelectorAll("path.curve").length).toBe(1);
  expect(svg.querySelector("path.curve")).toBe(first);
  expect(svg.querySelectorAll("circle.target-point").length).toBe(1);
  expect(svg.querySelector("g.hover-box text")!.textContent!.replace(/\u00a0/g, " ")).toBe("2.0 GiB → 20 %");
});

test("a redraw (a hover) keeps the brush and its state, so a brush in progress survives", () => {
  const svg = draw();
  const g = svg.querySelector("g.layer-brush") as SVGGElement & { __brush?: unknown };
  const state = g.__brush;
  expect(state).toBeDefined();
  drawCurveChart(svg, { points, estimate: null, currentBytes: 4 * GiB, measuredHit: 0.41, target: 0.55, targetBytes: 5.5 * GiB, hoverBytes: 3 * GiB }, { width, height, margin, id: "t", xDomain: null });
  expect(g.__brush).toBe(state);
  expect(svg.querySelectorAll("rect.overlay").length).toBe(1);
  // The overlay keeps the brush's datum (a redraw must not overwrite it, or brushing breaks).
  const overlay = svg.querySelector("rect.overlay") as SVGRectElement & { __data__?: { type?: string } };
  expect(overlay.__data__?.type).toBe("overlay");
});

test("an unreachable target draws no meeting point", () => {
  const svg = draw({ target: 0.95, targetBytes: null });
  expect(svg.querySelector("circle.target-point")).toBeNull();
  expect(svg.querySelector("path.target-line")!.getAttribute("class")).toContain("unreachable");
});

test("a target past what was observed is not drawn as unreachable: the answer is unknown until then", () => {
  // memcached filling: seen out to 4 GiB of an 8 GiB curve that ends below 95 %; the answer says
  // "unknown until memcached is full", and a red (unreachable) line beside it said otherwise
  const svg = draw({ target: 0.95, targetBytes: null, observedMaxBytes: 4 * GiB });
  expect(svg.querySelector("path.target-line")!.getAttribute("class")).toBe("target-line");
  expect(svg.querySelector("circle.target-point")).toBeNull();
});

test("zooming narrows x and fits y to what is visible", () => {
  const data = { points, estimate: null, currentBytes: 4 * GiB, measuredHit: 0.41, target: 0.55, targetBytes: 5.5 * GiB, hoverBytes: null };
  expect(fullXDomain(data)).toEqual([0, 8 * GiB]);
  expect(yDomainFor(data, null)).toEqual([0, 1]);
  const [lo, hi] = yDomainFor(data, [4 * GiB, 6 * GiB]);
  expect(lo).toBeLessThanOrEqual(0.37); // band low edge at 4 GiB
  expect(hi).toBeGreaterThanOrEqual(0.63); // band high edge at 6 GiB
  expect(hi - lo).toBeLessThan(0.5);
});

test("the target handle moves with the arrow keys", () => {
  const onTarget = vi.fn();
  const svg = draw({}, null, { onTarget });
  const handle = svg.querySelector("g.target-handle")!;
  expect(handle.getAttribute("aria-valuenow")).toBe("55");
  handle.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowUp", bubbles: true }));
  expect(onTarget).toHaveBeenLastCalledWith(0.551);
  handle.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown", shiftKey: true, bubbles: true }));
  expect(onTarget).toHaveBeenLastCalledWith(0.54);
});

test("past what was observed the curve is drawn faded and labelled, not as a line of its own", () => {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  const points = [1, 2, 3, 4, 5, 6, 7, 8].map((g) => ({ bytes: g * 1024 ** 3, hit: Math.min(0.8, g * 0.1) }));
  drawCurveChart(svg, { points, currentBytes: 4 * 1024 ** 3, measuredHit: 0.4, target: null, targetBytes: null, hoverBytes: null, observedMaxBytes: 4 * 1024 ** 3 }, { width: 600, height: 300, margin: { top: 20, right: 40, bottom: 30, left: 40 }, id: "t", xDomain: null });
  expect(svg.querySelector("path.curve-unobserved")).not.toBeNull();
  expect(svg.querySelector("rect.unobserved")).not.toBeNull();
  expect(svg.querySelector("text.unobserved-label")!.textContent).toBe("not observed yet");
  drawCurveChart(svg, { points, currentBytes: 4 * 1024 ** 3, measuredHit: 0.4, target: null, targetBytes: null, hoverBytes: null, observedMaxBytes: null }, { width: 600, height: 300, margin: { top: 20, right: 40, bottom: 30, left: 40 }, id: "t", xDomain: null });
  expect(svg.querySelector("path.curve-unobserved")).toBeNull();
  expect(svg.querySelector("rect.unobserved")).toBeNull();
});

test("a box measured a few pixels wide draws no rect of negative size", () => {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  document.body.appendChild(svg);
  const data: CurveChartData = { points, estimate: null, currentBytes: 4 * GiB, measuredHit: 0.41, target: 0.55, targetBytes: null, hoverBytes: null };
  drawCurveChart(svg, data, { width: 2, height, margin: { top: 24, right: 52, bottom: 34, left: 44 }, id: "t", xDomain: null });
  const negative = [...svg.querySelectorAll("rect")].filter((r) => Number(r.getAttribute("width")) < 0 || Number(r.getAttribute("height")) < 0);
  expect(negative.map((r) => r.getAttribute("class"))).toEqual([]);
});

test("at 390 px the now label moves off a curve whose plateau runs through the top of the plot", () => {
  // the cluster page at 390 px: plot 250 px wide, 222 px tall; today 1 GiB at 95 %, the curve
  // levelling at 98 % (its band up to 99.5 %) right across where the label stood
  const phone = { top: 24, right: 52, bottom: 34, left: 44 };
  const [w, h] = [346, 280];
  const high = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2].map((g) => {
    const hit = 0.98 * (1 - Math.exp(-3 * g));
    return { bytes: g * GiB, hit, lo: hit - 0.015, hi: Math.min(1, hit + 0.015) };
  });
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  document.body.appendChild(svg);
  const data = { points: high, estimate: null, currentBytes: GiB, measuredHit: 0.95, target: null, targetBytes: null, hoverBytes: null };
  drawCurveChart(svg, data, { width: w, height: h, margin: phone, id: "p", xDomain: null });
  const label = svg.querySelector("text.current-label")!;
  expect(label.textContent?.replace(/\u00a0/g, " ")).toBe("now 1.0 GiB");
  // its box (11 px text, about 6.6 px a character), on the axes' own scales, written out here
  const px = (bytes: number) => phone.left + (bytes / (2 * GiB)) * (w - phone.left - phone.right);
  const py = (hit: number) => h - phone.bottom - hit * (h - phone.top - phone.bottom);
  const lx = Number(label.getAttribute("x"));
  const ly = Number(label.getAttribute("y"));
  const lw = label.textContent!.length * 6.6;
  const [x0, x1] = label.getAttribute("text-anchor") === "end" ? [lx - lw, lx] : [lx, lx + lw];
  expect(x0).toBeGreaterThanOrEqual(phone.left);
  expect(x1).toBeLessThanOrEqual(w - phone.right);
  for (const p of high) {
    if (px(p.bytes) < x0 || px(p.bytes) > x1) continue;
    expect(py(p.hi) > ly + 3 || py(p.lo) < ly - 11, `curve at ${p.bytes / GiB} GiB under the label`).toBe(true);
  }
  // the old place, right of the now-line at the top, is where the plateau runs
  expect((label.getAttribute("text-anchor") ?? "start") === "start" && ly < 40).toBe(false);
});

test("a now label clear of the curve stays at the top right of the now-line", () => {
  const svg = draw({ target: null, targetBytes: null });
  const label = svg.querySelector("text.current-label")!;
  expect(label.getAttribute("text-anchor")).toBe("start");
  expect(Number(label.getAttribute("y"))).toBe(margin.top + 10);
});

// jsdom lays nothing out: the svg's box starts at the page's origin, so clientX is the svg's own x.
// jsdom has no PointerEvent: a MouseEvent carrying the pointer's type stands for one.
function pointer(svg: SVGSVGElement, type: string, pointerType: string, clientX: number) {
  const e = new MouseEvent(type, { clientX, clientY: 150, bubbles: true });
  Object.defineProperty(e, "pointerType", { value: pointerType });
  svg.dispatchEvent(e);
}

test("a tap shows the readout at the tapped memory and keeps it as the finger lifts", () => {
  const onHover = vi.fn();
  const svg = draw({}, null, { onHover });
  // x: 0..8 GiB over 50..600 px, so 325 px is 4 GiB. A tap sends down, up and leave, no move.
  pointer(svg, "pointerdown", "touch", 325);
  pointer(svg, "pointerup", "touch", 325);
  pointer(svg, "pointerleave", "touch", 325);
  expect(onHover).toHaveBeenCalledTimes(1);
  expect(onHover.mock.calls[0][0] / GiB).toBeCloseTo(4, 6);
  // a tap beside the plot clears it
  pointer(svg, "pointerdown", "touch", 20);
  expect(onHover).toHaveBeenLastCalledWith(null);
});

test("a mouse's readout follows the mouse and clears as it leaves the chart", () => {
  const onHover = vi.fn();
  const svg = draw({}, null, { onHover });
  pointer(svg, "pointermove", "mouse", 50 + 550 / 4);
  expect(onHover.mock.calls[0][0] / GiB).toBeCloseTo(2, 6);
  pointer(svg, "pointerleave", "mouse", 50 + 550 / 4);
  expect(onHover).toHaveBeenLastCalledWith(null);
});

test("at 390 px the now label and 'not observed yet' never cover one another", () => {
  // the demo's server page at 390 px: plot 254 px wide; today 64 MiB, seen out to 172 MiB, the curve
  // out to 320 MiB levelling at 98 %, 90 % at 69 MiB. "not observed yet" ended 6 px right of the
  // shade's edge and ran left under "now 64 MiB", which had moved to the bottom off the curve.
  const MiB = 2 ** 20;
  const phone = { top: 24, right: 52, bottom: 40, left: 44 };
  const [w, h] = [350, 280];
  const demo = [4, 16, 32, 48, 64, 80, 96, 128, 160, 192, 256, 320].map((mb) => {
    const hit = 0.98 * (1 - Math.exp(-mb / 28));
    return { bytes: mb * MiB, hit, lo: hit - 0.02, hi: Math.min(1, hit + 0.02) };
  });
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  document.body.appendChild(svg);
  for (const seen of [172, 250, 300]) {
    const data: CurveChartData = {
      points: demo, estimate: null, currentBytes: 64 * MiB, measuredHit: 0.89, target: 0.9, targetBytes: bytesForHit(demo, 0.9),
      hoverBytes: null, observedMaxBytes: seen * MiB,
    };
    drawCurveChart(svg, data, { width: w, height: h, margin: phone, id: "p", xDomain: null });
    const box = (sel: string) => {
      const el = svg.querySelector(sel)!;
      // 11 px text, about 6.6 px a character, written out here as the chart's own estimate
      const [x, y] = [Number(el.getAttribute("x")), Number(el.getAttribute("y"))];
      const tw = el.textContent!.length * 6.6;
      const x0 = el.getAttribute("text-anchor") === "end" ? x - tw : x;
      return { x0, x1: x0 + tw, y0: y - 11, y1: y + 3 };
    };
    const now = box("text.current-label");
    const unseen = box("text.unobserved-label");
    const apart = now.x1 < unseen.x0 || unseen.x1 < now.x0 || now.y1 < unseen.y0 || unseen.y1 < now.y0;
    expect(apart, `seen to ${seen} MiB: now ${JSON.stringify(now)}, not observed yet ${JSON.stringify(unseen)}`).toBe(true);
    // both inside the plot
    for (const b of [now, unseen]) {
      expect(b.x0).toBeGreaterThanOrEqual(phone.left);
      expect(b.x1).toBeLessThanOrEqual(w - phone.right);
    }
  }
});
