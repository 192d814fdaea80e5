// Number formatting shared by charts, tables and sentences. Memory is shown in binary units
// (memcached's limit_maxbytes and slab pages are powers of two), hit rates in percent with a
// no-break space ("92 %"), money in whole currency units unless small.

export const KiB = 1024;
export const MiB = 1024 ** 2;
export const GiB = 1024 ** 3;
export const TiB = 1024 ** 4;

const UNITS: ReadonlyArray<[string, number]> = [
  ["TiB", TiB],
  ["GiB", GiB],
  ["MiB", MiB],
  ["KiB", KiB],
  ["B", 1],
];

const NBSP = "\u00a0";

/** The one name of a server's or cluster's measured hit rate (the API's measured_hit_ratio: what
 *  the sizing answers rest on) in the card, the servers table and the curve page, and what it
 *  means (a title on the name). The table once showed the newest window's own figure instead. */
export const MEASURED_HIT_RATE = "Measured hit rate";
export const MEASURED_HIT_RATE_MEANS =
  "memcached's hits over reads in the recent windows the answers rest on, each weighted by its reads (quiet or lossy windows left out)";
/** The one name of memcached's memory limit (limit_maxbytes: what -m sets) and of the bytes it has
 *  taken toward it (total_malloced), in the card, the servers table, the curve page and its answer.
 *  The curve page once said "today 785 MiB" in its header (the curve's own x: item pages) and
 *  "-m today 832 MiB" below it. */
export const MEMORY_LIMIT = "Memory limit (-m)";
export const MEMORY_USED = "Used";
export const MINUS = "\u2212";

/** The binary unit in which `bytes` reads as a number in [1, 1024) (bytes below 1 KiB: "B"). */
export function byteUnit(bytes: number): [string, number] {
  const abs = Math.abs(bytes);
  for (const u of UNITS) if (abs >= u[1]) return u;
  return ["B", 1];
}

/** Round to one decimal below 100, to integers from 100 up ("11.4 GiB", "512 MiB"). */
function roundForDisplay(v: number): string {
  const abs = Math.abs(v);
  if (abs >= 100) return Math.round(v).toString();
  const r = Math.round(v * 10) / 10;
  const s = r.toFixed(1);
  return s.endsWith(".0") && Math.abs(r) >= 10 ? s.slice(0, -2) : s;
}

/** "11.4 GiB"; a value that would round to 1024 of a unit moves up to the next unit. The backend's
 *  texts write the same (backend/hitcurve/rules/memlimit.py human_bytes; both check lib/bytes.cases.json). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "—";
  let [name, size] = byteUnit(bytes);
  if (name !== "TiB" && Math.abs(bytes) / size >= 1023.5) {
    const i = UNITS.findIndex((u) => u[0] === name);
    [name, size] = UNITS[i - 1];
  }
  if (name === "B") return `${Math.round(bytes)}${NBSP}B`;
  return `${roundForDisplay(bytes / size)}${NBSP}${name}`.replace("-", MINUS);
}

/** Signed memory difference: "+3.4 GiB", "−512 MiB", "±0 B". */
export function formatBytesDelta(bytes: number): string {
  if (!Number.isFinite(bytes)) return "—";
  if (Math.abs(bytes) < 0.5) return `±0${NBSP}B`;
  const s = formatBytes(Math.abs(bytes));
  return (bytes > 0 ? "+" : MINUS) + s;
}

/** A ratio as percent: 0.92 → "92 %", 0.9234 → "92.3 %" (digits = decimals). The backend's
 *  texts write the same (backend/hitcurve/rules/percent.py; both check lib/percent.cases.json). */
export function formatPercent(ratio: number, digits = 1): string {
  if (!Number.isFinite(ratio)) return "—";
  const v = ratio * 100;
  let s = v.toFixed(digits);
  if (digits > 0 && /\.0+$/.test(s)) s = s.replace(/\.0+$/, "");
  return `${s.replace("-", MINUS)}${NBSP}%`;
}

/** A hit rate, the one way the dashboard (and the API's messages, e-mails and alerts) write it:
 *  one decimal, "90 %", "89.8 %". Tables, charts and sentences alike, so one figure never reads
 *  "89.80 %" in one place and "89.8 %" in another. */
export function formatHitRate(ratio: number): string {
  return formatPercent(ratio, 1);
}

/** Difference of two hit ratios in percentage points: "+1.4 pp". */
export function formatPp(delta: number, digits = 1): string {
  if (!Number.isFinite(delta)) return "—";
  const v = delta * 100;
  const s = Math.abs(v).toFixed(digits);
  if (Number(s) === 0) return `±0${NBSP}pp`;
  return `${v > 0 ? "+" : MINUS}${s}${NBSP}pp`;
}

/** A relative change in whole percent: "+12 %", "−4 %", "±0 %" (a change that rounds to 0 has
 *  no sign: the policies table read "−0 %" for −0.05 %). */
export function formatChange(ratio: number): string {
  if (!Number.isFinite(ratio)) return "—";
  const v = Math.round(Math.abs(ratio) * 100);
  if (v === 0) return `±0${NBSP}%`;
  return `${ratio < 0 ? MINUS : "+"}${v}${NBSP}%`;
}

/** "$41", "$1,234", "$0.42" (amounts under 10 keep cents). */
export function formatMoney(amount: number, currency = "USD"): string {
  if (!Number.isFinite(amount)) return "—";
  const small = Math.abs(amount) < 10 && amount !== 0;
  return new Intl.NumberFormat("en-US", {
    style: "currency",
    currency,
    minimumFractionDigits: small ? 2 : 0,
    maximumFractionDigits: small ? 2 : 0,
  })
    .format(amount)
    .replace("-", MINUS);
}

/** Signed money difference: "+$41", "−$12", "±$0". */
export function formatMoneyDelta(amount: number, currency = "USD"): string {
  if (!Number.isFinite(amount)) return "—";
  if (Math.abs(amount) < 0.005) return `±${formatMoney(0, currency)}`;
  return (amount > 0 ? "+" : MINUS) + formatMoney(Math.abs(amount), currency);
}

/** How long ago an ISO time was, coarse: "just now", "5 min ago", "3 h ago", "2 days ago". */
export function formatAge(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return "never";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "unknown";
  const s = Math.max(0, (now - t) / 1000);
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)}${NBSP}min ago`;
  if (s < 86400 * 2) return `${Math.round(s / 3600)}${NBSP}h ago`;
  return `${Math.round(s / 86400)}${NBSP}days ago`;
}

/**
 * Labels for a byte axis: every tick in the one unit byteTicks chose, as short as exact
 * ("0.4 GiB", "1 GiB", "1.2 GiB"), so neighbouring labels compare at a glance.
 */
export function byteTickFormat(lo: number, hi: number): (bytes: number) => string {
  const [name, size] = byteUnit(Math.max(Math.abs(lo), Math.abs(hi)));
  return (bytes: number) => {
    if (bytes === 0) return "0";
    const v = Math.round((bytes / size) * 1000) / 1000;
    return `${v}${NBSP}${name}`;
  };
}

/**
 * Tick values for a byte axis: nice multiples (1, 2, 5 × 10^k) of one binary unit, so labels
 * read "2 GiB, 4 GiB" rather than "1.86 GiB". Returns byte values within [lo, hi].
 */
export function byteTicks(lo: number, hi: number, count = 6): number[] {
  if (!(hi > lo) || !Number.isFinite(lo) || !Number.isFinite(hi)) return [];
  const [, unit] = byteUnit(Math.max(Math.abs(lo), Math.abs(hi)));
  const span = (hi - lo) / unit;
  const raw = span / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw * 0.999) ?? 10 * mag;
  const first = Math.ceil(lo / unit / step - 1e-9) + 0; // + 0 turns -0 into 0
  const ticks: number[] = [];
  for (let i = first; i * step <= hi / unit + 1e-9; i++) ticks.push((Math.round(i * step * 1e9) / 1e9) * unit + 0);
  return ticks;
}

/** A duration for people: "45 s", "4 min", "1.5 h", "3 days". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "—";
  const s = Math.max(0, seconds);
  if (s < 90) return `${Math.max(1, Math.round(s))}${NBSP}s`;
  if (s < 90 * 60) return `${Math.round(s / 60)}${NBSP}min`;
  if (s < 36 * 3600) return `${roundForDisplay(s / 3600)}${NBSP}h`;
  return `${Math.round(s / 86400)}${NBSP}days`;
}

/** A point in time, short and local: "14:05" today, "Nov 22, 14:05" on other days. */
export function formatTime(d: Date, now: Date = new Date()): string {
  const hm = `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
  if (d.toDateString() === now.toDateString()) return hm;
  return `${d.toLocaleString("en-US", { month: "short" })} ${d.getDate()}, ${hm}`;
}

/**
 * A time axis fitted to the data: the data's own span (at least 10 minutes, centred on a lone
 * point), with tick labels that never show seconds or milliseconds: "14:05" within a day,
 * "Nov 22 14:00" / "Nov 22" across days.
 */
export function timeAxisDomain(times: Date[]): [Date, Date] {
  if (!times.length) {
    const now = Date.now();
    return [new Date(now - 3600_000), new Date(now)];
  }
  let lo = Math.min(...times.map((t) => t.getTime()));
  let hi = Math.max(...times.map((t) => t.getTime()));
  const minSpan = 10 * 60_000;
  if (hi - lo < minSpan) {
    const mid = (lo + hi) / 2;
    lo = mid - minSpan / 2;
    hi = mid + minSpan / 2;
  }
  return [new Date(lo), new Date(hi)];
}

/**
 * Tick times for a span of more than 3 days: local midnights, every k-th day so that at most
 * maxTicks fit (labelled "Nov 22" by timeTickFormat, each day once). null for shorter spans,
 * where the scale's own ticks (hours and minutes) read well.
 */
export function dayTicks(domain: [Date, Date], maxTicks: number): Date[] | null {
  const span = domain[1].getTime() - domain[0].getTime();
  if (span <= 3 * 86400_000) return null;
  const k = Math.max(1, Math.ceil(span / 86400_000 / Math.max(1, maxTicks)));
  const t = new Date(domain[0]);
  t.setHours(0, 0, 0, 0);
  if (t < domain[0]) t.setDate(t.getDate() + 1);
  const out: Date[] = [];
  for (; t <= domain[1]; t.setDate(t.getDate() + k)) out.push(new Date(t));
  return out;
}

export function timeTickFormat(domain: [Date, Date]): (d: Date) => string {
  const span = domain[1].getTime() - domain[0].getTime();
  const hm = (d: Date) => `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
  const md = (d: Date) => `${d.toLocaleString("en-US", { month: "short" })} ${d.getDate()}`;
  if (span <= 36 * 3600_000) return hm;
  if (span <= 3 * 86400_000) return (d) => (d.getHours() === 0 && d.getMinutes() === 0 ? md(d) : `${md(d)} ${hm(d)}`);
  return md;
}
