import { describe, expect, test } from "vitest";
import sharedBytes from "./bytes.cases.json";
import shared from "./percent.cases.json";
import {
  byteTicks, byteTickFormat, formatAge, formatBytes, formatBytesDelta, formatChange, formatDuration, formatHitRate, formatMoney, formatMoneyDelta, formatPercent, formatPp,
  dayTicks, formatTime, timeAxisDomain, timeTickFormat,
} from "./format";

// Compare with ordinary spaces and hyphens; the formatter uses no-break spaces and true minus signs.
const plain = (s: string) => s.replace(/\u00a0/g, " ").replace(/\u2212/g, "-");
const GiB = 1024 ** 3;

describe("formatBytes", () => {
  test("uses binary units and one decimal below 100", () => {
    expect(plain(formatBytes(11.4 * GiB))).toBe("11.4 GiB");
    expect(plain(formatBytes(512 * 1024 ** 2))).toBe("512 MiB");
    expect(plain(formatBytes(1536))).toBe("1.5 KiB");
    expect(plain(formatBytes(100))).toBe("100 B");
    expect(plain(formatBytes(2 * GiB))).toBe("2.0 GiB");
    expect(plain(formatBytes(64 * GiB))).toBe("64 GiB");
    expect(plain(formatBytes(9.97 * 1024 ** 2))).toBe("10 MiB");
  });
  test("moves up a unit instead of printing 1024", () => {
    expect(plain(formatBytes(GiB - 1))).toBe("1.0 GiB");
  });
  test("signs deltas", () => {
    expect(plain(formatBytesDelta(3.4 * GiB))).toBe("+3.4 GiB");
    expect(plain(formatBytesDelta(-512 * 1024 ** 2))).toBe("-512 MiB");
    expect(plain(formatBytesDelta(0))).toBe("±0 B");
  });
});

describe("formatPercent and formatPp", () => {
  test("drops a trailing .0", () => {
    expect(plain(formatPercent(0.92))).toBe("92 %");
    expect(plain(formatPercent(0.9234))).toBe("92.3 %");
    expect(plain(formatPercent(0.9234, 2))).toBe("92.34 %");
  });
  test("writes every case of the table the backend's texts are checked against", () => {
    expect(shared.cases.length).toBeGreaterThan(5);
    for (const c of shared.cases) expect(formatPercent(c.ratio, c.digits)).toBe(c.text);
  });
  test("writes every memory size of the table the backend's texts are checked against", () => {
    expect(sharedBytes.cases.length).toBeGreaterThan(5);
    for (const c of sharedBytes.cases) expect(formatBytes(c.bytes)).toBe(c.text);
  });
  test("a hit rate is written one way: one decimal, a trailing .0 dropped", () => {
    expect(formatHitRate(0.9)).toBe("90\u00a0%");
    expect(formatHitRate(0.898)).toBe("89.8\u00a0%");
    expect(formatHitRate(0.8976)).toBe("89.8\u00a0%");
  });
  test("signs percentage points", () => {
    expect(plain(formatPp(0.014))).toBe("+1.4 pp");
    expect(plain(formatPp(-0.02))).toBe("-2.0 pp");
    expect(plain(formatPp(0.00001))).toBe("±0 pp");
  });
});

describe("formatMoney", () => {
  test("whole dollars above 10, cents below, signed deltas", () => {
    expect(formatMoney(41.2)).toBe("$41");
    expect(formatMoney(1234.5)).toBe("$1,235");
    expect(formatMoney(0.42)).toBe("$0.42");
    expect(plain(formatMoneyDelta(41))).toBe("+$41");
    expect(plain(formatMoneyDelta(-12))).toBe("-$12");
  });
});

describe("formatAge", () => {
  test("is coarse", () => {
    const now = Date.parse("2026-01-01T12:00:00Z");
    expect(formatAge("2026-01-01T11:59:50Z", now)).toBe("just now");
    expect(plain(formatAge("2026-01-01T11:55:00Z", now))).toBe("5 min ago");
    expect(plain(formatAge("2026-01-01T09:00:00Z", now))).toBe("3 h ago");
    expect(plain(formatAge("2025-12-29T12:00:00Z", now))).toBe("3 days ago");
    expect(formatAge(null, now)).toBe("never");
  });
});

describe("byteTicks", () => {
  test("are round multiples of one binary unit inside the domain", () => {
    expect(byteTicks(0, 16 * GiB, 4)).toEqual([0, 5, 10, 15].map((g) => g * GiB));
    expect(byteTicks(0, 10 * GiB, 5)).toEqual([0, 2, 4, 6, 8, 10].map((g) => g * GiB));
    const t = byteTicks(3 * GiB, 7 * GiB, 4);
    expect(t[0]).toBeGreaterThanOrEqual(3 * GiB);
    expect(t[t.length - 1]).toBeLessThanOrEqual(7 * GiB);
    expect(t.every((v) => Number.isInteger(v / (0.5 * GiB)) || Number.isInteger(v / GiB))).toBe(true);
  });
  test("are labelled in one unit", () => {
    const f = byteTickFormat(0, 2.06 * GiB);
    expect(byteTicks(0, 2.06 * GiB, 5).map((b) => plain(f(b)))).toEqual(["0", "0.5 GiB", "1 GiB", "1.5 GiB", "2 GiB"]);
  });
  test("is empty for an empty domain", () => {
    expect(byteTicks(5, 5)).toEqual([]);
  });
});

test("time axes fit the data and never tick in milliseconds", () => {
  const t = new Date(2026, 10, 25, 14, 5, 0);
  const [lo, hi] = timeAxisDomain([t]);
  expect(hi.getTime() - lo.getTime()).toBe(10 * 60_000);
  expect(lo.getTime() + 5 * 60_000).toBe(t.getTime());
  const fmt = timeTickFormat([lo, hi]);
  expect(fmt(new Date(2026, 10, 25, 14, 5, 0, 379))).toBe("14:05");
  expect(timeTickFormat([new Date(2026, 10, 18), new Date(2026, 10, 25)])(new Date(2026, 10, 22, 0, 0))).toBe("Nov 22");
  expect(formatTime(t, new Date(2026, 10, 25, 18, 0))).toBe("14:05");
  expect(formatTime(t, new Date(2026, 10, 26, 18, 0))).toBe("Nov 25, 14:05");
  expect(formatDuration(240)).toBe("4\u00a0min");
  expect(formatDuration(45)).toBe("45\u00a0s");
});

test("slabs reassign is offered from memcached 1.6.42 on only", async () => {
  const { reassignIsSafe } = await import("../components/SlabClasses");
  expect(reassignIsSafe("1.6.18")).toBe(false);
  expect(reassignIsSafe("1.6.41")).toBe(false);
  expect(reassignIsSafe("1.6.42")).toBe(true);
  expect(reassignIsSafe("1.7.0")).toBe(true);
  expect(reassignIsSafe(null)).toBe(false);
});

test("a time axis across days ticks each day once, at midnight", () => {
  const week: [Date, Date] = [new Date(2026, 10, 19, 9, 31), new Date(2026, 10, 26, 21, 31)];
  const ticks = dayTicks(week, 11)!;
  expect(ticks.map(timeTickFormat(week))).toEqual(["Nov 20", "Nov 21", "Nov 22", "Nov 23", "Nov 24", "Nov 25", "Nov 26"]);
  expect(dayTicks(week, 3)!.map(timeTickFormat(week))).toEqual(["Nov 20", "Nov 23", "Nov 26"]);
  expect(dayTicks([new Date(2026, 10, 25, 9), new Date(2026, 10, 26, 21)], 10)).toBeNull();
});

test("a relative change that rounds to nothing has no sign", () => {
  // the policies table's recompute time: NbQ-CLOCK 925.3 s against LRU's 925.8 s read "−0 %"
  expect(plain(formatChange(925.3 / 925.8 - 1))).toBe("±0 %");
  expect(plain(formatChange(0.004))).toBe("±0 %");
  expect(plain(formatChange(891.6 / 925.8 - 1))).toBe("-4 %");
  expect(plain(formatChange(0.125))).toBe("+13 %");
});
