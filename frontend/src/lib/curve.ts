// Hit-rate curve math: a curve is a list of (bytes, hit ratio) points with strictly increasing
// bytes and non-decreasing hit ratios (the agent protocol guarantees both). Between points the
// curve is the monotone cubic the sizing API uses (./pchip.ts), from (0, 0); beyond the last
// point nothing is known, so lookups report "beyond" instead of guessing.
import { cleanCurve, fitPchip, pchipAt, pchipInverse, pchipSamples, type Pchip } from "./pchip";

export type CurvePoint = {
  bytes: number;
  hit: number;
  /** Lower and upper edge of the uncertainty band at this size, when known. */
  lo?: number;
  hi?: number;
};

export type Curve = ReadonlyArray<CurvePoint>;

const fits = new WeakMap<Curve, Pchip | null>();
const bandFits = new WeakMap<Curve, [Pchip, Pchip] | null>();

/** The curve's interpolant, fitted once per points array (as the API fits it). */
export function interpolant(curve: Curve): Pchip | null {
  let f = fits.get(curve);
  if (f === undefined) {
    const [xs, ys] = cleanCurve(
      curve.map((p) => p.bytes),
      curve.map((p) => p.hit),
    );
    f = xs.length ? fitPchip(xs, ys) : null;
    fits.set(curve, f);
  }
  return f;
}

/** Hit ratio at `bytes` on the interpolated curve; `null` beyond the curve's last point. */
export function hitAt(curve: Curve, bytes: number): number | null {
  const f = interpolant(curve);
  if (!f || !Number.isFinite(bytes)) return null;
  if (bytes <= 0) return 0;
  if (bytes > f.x[f.x.length - 1]) return null;
  return pchipAt(f, bytes);
}

/** Like hitAt, but flat beyond the last point (for drawing a hover readout). */
export function hitAtClamped(curve: Curve, bytes: number): number {
  const f = interpolant(curve);
  return f ? pchipAt(f, bytes) : 0;
}

/** Band edges at `bytes` by the same interpolation (falls back to the curve itself). */
export function bandAt(curve: Curve, bytes: number): { lo: number; hi: number } | null {
  const h = hitAt(curve, bytes);
  if (h === null) return null;
  let b = bandFits.get(curve);
  if (b === undefined) {
    const xs = curve.map((p) => p.bytes);
    const lo = cleanCurve(xs, curve.map((p) => p.lo ?? p.hit));
    const hi = cleanCurve(xs, curve.map((p) => p.hi ?? p.hit));
    b = lo[0].length && hi[0].length ? [fitPchip(...lo), fitPchip(...hi)] : null;
    bandFits.set(curve, b);
  }
  return b ? { lo: pchipAt(b[0], bytes), hi: pchipAt(b[1], bytes) } : { lo: h, hi: h };
}

/**
 * Smallest memory whose hit ratio reaches `target` (the inverse lookup). `null` when the
 * curve never reaches it within its measured range (the answer would be a guess).
 */
export function bytesForHit(curve: Curve, target: number): number | null {
  const f = interpolant(curve);
  if (!f || !Number.isFinite(target)) return null;
  if (target <= 0) return 0;
  return pchipInverse(f, target);
}

/** Points along the interpolated curve for drawing (knots plus a few between each pair). */
export function curveSamples(curve: Curve, perSegment = 6): Array<{ bytes: number; hit: number }> {
  const f = interpolant(curve);
  return f ? pchipSamples(f, perSegment).map(([bytes, hit]) => ({ bytes, hit })) : [];
}

/** The highest hit ratio the curve reaches within its range. */
export function maxHit(curve: Curve): number {
  return curve.length ? curve[curve.length - 1].hit : 0;
}

/** Monthly cost of `bytes` of memory at `pricePerGbMonth`, GB meaning GiB (2^30 bytes). */
export function monthlyCost(bytes: number, pricePerGbMonth: number): number {
  return (bytes / 1024 ** 3) * pricePerGbMonth;
}
