import { describe, expect, test } from "vitest";
import { cleanCurve, fitPchip, pchipAt, pchipInverse, pchipSamples } from "./pchip";

const GiB = 1024 ** 3;
const xs = [0.5, 1, 2, 3, 4, 6, 8].map((g) => g * GiB);
const ys = [0.3, 0.5, 0.78, 0.8, 0.8, 0.91, 0.93];

// Reference values computed by the sizing API's own implementation (backend hitcurve/rules/curves.py,
// Python, written independently): `Pchip.fit(xs, ys)`, then `p(x)` and `p.inverse(t)`.
const REF_AT: Array<[number, number]> = [
  [0.1, 0.06832], [0.25, 0.16375], [0.75, 0.409], [1.5, 0.6773333333333332], [2.5, 0.7946666666666666],
  [3.5, 0.8], [5, 0.8507692307692307], [7, 0.9242307692307693], [9, 0.93],
];
const REF_INV: Array<[number, number | null]> = [
  [0.1, 159185791.625], [0.4, 781103513.5], [0.65, 1523662041.0], [0.79, 2477050112.0], [0.8, 3221225430.0],
  [0.85, 5358150460.0], [0.92, 7142280268.0], [0.93, 8589934496.0], [0.95, null],
];

describe("PCHIP, as the sizing API computes it", () => {
  const p = fitPchip(xs, ys);
  test("agrees with the API's implementation at sample sizes", () => {
    for (const [g, want] of REF_AT) expect(pchipAt(p, g * GiB)).toBeCloseTo(want, 12);
  });
  test("agrees with the API's inverse (bisection to 1e-9 relative)", () => {
    for (const [t, want] of REF_INV) {
      const got = pchipInverse(p, t);
      if (want === null) expect(got).toBeNull();
      else expect(Math.abs(got! - want) / want).toBeLessThan(2e-9);
    }
  });
  test("passes through every knot and the origin", () => {
    expect(pchipAt(p, 0)).toBe(0);
    xs.forEach((x, i) => expect(pchipAt(p, x)).toBeCloseTo(ys[i], 15));
  });
  test("reproduces a straight line exactly", () => {
    const line = fitPchip([1, 2, 3, 4], [0.1, 0.2, 0.3, 0.4]);
    for (const x of [0.5, 1.25, 2.5, 3.9]) expect(pchipAt(line, x)).toBeCloseTo(x / 10, 12);
  });
  test("never decreases, also on plateaus", () => {
    let prev = -1;
    for (const [, y] of pchipSamples(p, 40)) {
      expect(y).toBeGreaterThanOrEqual(prev);
      prev = y;
    }
  });
  test("is flat beyond the last point", () => {
    expect(pchipAt(p, 100 * GiB)).toBe(0.93);
  });
  test("inverse is the smallest size reaching the target", () => {
    for (const t of [0.05, 0.33, 0.6, 0.79, 0.86, 0.925]) {
      const x = pchipInverse(p, t)!;
      expect(pchipAt(p, x)).toBeGreaterThanOrEqual(t - 1e-12);
      expect(pchipAt(p, x * (1 - 1e-6))).toBeLessThan(t);
    }
  });
});

describe("cleanCurve", () => {
  test("drops bad points and forces a running maximum, like the API", () => {
    const [cx, cy] = cleanCurve([0, 1, 2, 2, NaN, 3, 4], [0.1, 0.2, 0.5, 0.6, 0.7, 0.4, 1.2]);
    expect(cx).toEqual([1, 2, 3, 4]);
    expect(cy).toEqual([0.2, 0.5, 0.5, 1]);
  });
});
