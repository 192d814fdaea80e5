import { describe, expect, test } from "vitest";
import { bandAt, bytesForHit, curveSamples, hitAt, monthlyCost } from "./curve";

const GiB = 1024 ** 3;
// A straight-line curve: PCHIP reproduces lines exactly, so the expected values are plain
// arithmetic (hit = 0.1 per GiB), independent of the code under test.
const line = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((g) => ({ bytes: g * GiB, hit: g / 10, lo: g / 10 - 0.05, hi: g / 10 + 0.05 }));
// A curve with a plateau: 0.8 from 2 to 3 GiB.
const plateau = [
  { bytes: 1 * GiB, hit: 0.5 },
  { bytes: 2 * GiB, hit: 0.8 },
  { bytes: 3 * GiB, hit: 0.8 },
  { bytes: 4 * GiB, hit: 0.9 },
];

describe("hitAt", () => {
  test("follows the curve between points and from the origin", () => {
    expect(hitAt(line, 2.5 * GiB)).toBeCloseTo(0.25, 12);
    expect(hitAt(line, 0.5 * GiB)).toBeCloseTo(0.05, 12);
    expect(hitAt(line, 0)).toBe(0);
  });
  test("is exact at the points", () => {
    plateau.forEach((p) => expect(hitAt(plateau, p.bytes)).toBeCloseTo(p.hit, 15));
  });
  test("stays on a plateau", () => {
    expect(hitAt(plateau, 2.5 * GiB)).toBe(0.8);
  });
  test("refuses to guess beyond the last point", () => {
    expect(hitAt(line, 9 * GiB + 1)).toBeNull();
    expect(hitAt([], GiB)).toBeNull();
  });
});

describe("bytesForHit", () => {
  test("inverts hitAt", () => {
    expect(bytesForHit(line, 0.45)! / GiB).toBeCloseTo(4.5, 6);
    for (const t of [0.1, 0.33, 0.5, 0.7, 0.81, 0.87, 0.9]) {
      const b = bytesForHit(plateau, t)!;
      expect(hitAt(plateau, b)).toBeCloseTo(t, 8);
    }
  });
  test("takes the smallest memory on a plateau", () => {
    expect(bytesForHit(plateau, 0.8)! / GiB).toBeCloseTo(2, 6);
  });
  test("says null when the curve never reaches the target", () => {
    expect(bytesForHit(plateau, 0.95)).toBeNull();
  });
  test("needs no memory for a zero target", () => {
    expect(bytesForHit(plateau, 0)).toBe(0);
  });
});

test("bandAt interpolates both edges", () => {
  const b = bandAt(line, 2.5 * GiB)!;
  expect(b.lo).toBeCloseTo(0.2, 12);
  expect(b.hi).toBeCloseTo(0.3, 12);
});

test("curveSamples include every point and never decrease", () => {
  const s = curveSamples(plateau, 5);
  for (const p of plateau) expect(s.some((q) => q.bytes === p.bytes && Math.abs(q.hit - p.hit) < 1e-15)).toBe(true);
  for (let i = 1; i < s.length; i++) expect(s[i].hit).toBeGreaterThanOrEqual(s[i - 1].hit);
});

test("monthly cost prices GiB-months", () => {
  expect(monthlyCost(8 * GiB, 12)).toBe(96);
  expect(monthlyCost(512 * 1024 ** 2, 4.5)).toBe(2.25);
});
