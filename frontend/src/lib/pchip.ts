// Monotone cubic interpolation (Fritsch–Carlson PCHIP with Fritsch–Butland interior slopes) and
// its inverse — the same interpolation the sizing API uses (backend hitcurve/rules/curves.py), so what
// the chart draws and where the target meets it agree with the API's stated answer.
// (0, 0) is prepended when the first size is > 0: an empty cache hits nothing.

export type Pchip = {
  readonly x: readonly number[];
  readonly y: readonly number[];
  readonly d: readonly number[];
};

/** The API's cleaning: finite sizes > 0, strictly increasing; ratios clipped to [0, 1], running max. */
export function cleanCurve(xs: readonly number[], ys: readonly number[]): [number[], number[]] {
  const ox: number[] = [];
  const oy: number[] = [];
  let top = 0;
  const n = Math.min(xs.length, ys.length);
  for (let i = 0; i < n; i++) {
    const x = xs[i];
    const y = ys[i];
    if (x == null || y == null || !Number.isFinite(x) || !Number.isFinite(y) || x <= 0) continue;
    if (ox.length && x <= ox[ox.length - 1]) continue;
    top = Math.max(top, Math.min(1, Math.max(0, y)));
    ox.push(x);
    oy.push(top);
  }
  return [ox, oy];
}

function endSlope(h0: number, h1: number, d0: number, d1: number): number {
  const s = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
  const sign = (v: number) => (Object.is(v, -0) || v < 0 ? -1 : 1); // math.copysign(1, v)
  if (sign(s) !== sign(d0) || s === 0) return 0;
  if (sign(d0) !== sign(d1) && Math.abs(s) > Math.abs(3 * d0)) return 3 * d0;
  return s;
}

export function fitPchip(xs: readonly number[], ys: readonly number[]): Pchip {
  if (xs.length !== ys.length || xs.length === 0) throw new Error("curve needs equally many sizes and hit ratios, at least one");
  const x = [...xs];
  const y = [...ys];
  if (x[0] > 0) {
    x.unshift(0);
    y.unshift(0);
  }
  const n = x.length;
  for (let i = 1; i < n; i++) {
    if (!(x[i] > x[i - 1]) || y[i] < y[i - 1]) throw new Error("curve must have strictly increasing sizes and non-decreasing hit ratios");
  }
  if (n === 1) return { x, y, d: [0] };
  const h: number[] = [];
  const delta: number[] = [];
  for (let i = 0; i < n - 1; i++) {
    h.push(x[i + 1] - x[i]);
    delta.push((y[i + 1] - y[i]) / h[i]);
  }
  const d = new Array<number>(n).fill(0);
  for (let i = 1; i < n - 1; i++) {
    if (delta[i - 1] === 0 || delta[i] === 0 || delta[i - 1] > 0 !== delta[i] > 0) d[i] = 0;
    else {
      const w1 = 2 * h[i] + h[i - 1];
      const w2 = h[i] + 2 * h[i - 1];
      d[i] = (w1 + w2) / (w1 / delta[i - 1] + w2 / delta[i]);
    }
  }
  d[0] = endSlope(h[0], n > 2 ? h[1] : h[0], delta[0], n > 2 ? delta[1] : delta[0]);
  d[n - 1] = endSlope(h[n - 2], n > 2 ? h[n - 3] : h[n - 2], delta[n - 2], n > 2 ? delta[n - 3] : delta[n - 2]);
  return { x, y, d };
}

function segment(p: Pchip, xv: number): number {
  let lo = 0;
  let hi = p.x.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (p.x[mid] <= xv) lo = mid;
    else hi = mid;
  }
  return lo;
}

function evalSegment(p: Pchip, i: number, xv: number): number {
  const h = p.x[i + 1] - p.x[i];
  const t = (xv - p.x[i]) / h;
  const t2 = t * t;
  const t3 = t2 * t;
  const v =
    (2 * t3 - 3 * t2 + 1) * p.y[i] + (t3 - 2 * t2 + t) * h * p.d[i] + (-2 * t3 + 3 * t2) * p.y[i + 1] + (t3 - t2) * h * p.d[i + 1];
  return Math.min(Math.max(v, p.y[i]), p.y[i + 1]);
}

/** f(x); constant beyond the last knot. */
export function pchipAt(p: Pchip, xv: number): number {
  if (xv <= p.x[0]) return p.y[0];
  const last = p.x.length - 1;
  if (xv >= p.x[last]) return p.y[last];
  return evalSegment(p, segment(p, xv), xv);
}

/** Smallest x with f(x) >= target (bisection, as the API does); null above the maximum. */
export function pchipInverse(p: Pchip, target: number): number | null {
  const last = p.x.length - 1;
  if (target <= p.y[0]) return p.x[0];
  if (target > p.y[last]) return null;
  let k = 1;
  while (p.y[k] < target) k++;
  const i = k - 1;
  let lo = p.x[i];
  let hi = p.x[i + 1];
  for (let it = 0; it < 60; it++) {
    const mid = (lo + hi) / 2;
    if (evalSegment(p, i, mid) >= target) hi = mid;
    else lo = mid;
    if (hi - lo <= 1e-9 * Math.max(1, hi)) break;
  }
  return hi;
}

/**
 * Points along the interpolant for drawing: every knot plus `perSegment` evenly spaced points
 * inside each segment (a cubic between knots needs few to look smooth).
 */
export function pchipSamples(p: Pchip, perSegment = 6): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < p.x.length - 1; i++) {
    out.push([p.x[i], p.y[i]]);
    const h = p.x[i + 1] - p.x[i];
    for (let j = 1; j <= perSegment; j++) {
      const xv = p.x[i] + (h * j) / (perSegment + 1);
      out.push([xv, evalSegment(p, i, xv)]);
    }
  }
  out.push([p.x[p.x.length - 1], p.y[p.y.length - 1]]);
  return out;
}
