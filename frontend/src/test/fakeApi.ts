// A stand-in for the backend in component tests: answers fetch by method and path, recording
// every call. JSON shapes follow backend/hitcurve/schemas/api.py.
import { vi } from "vitest";
import type { Schemas } from "../api/call";

export type Handler = (url: URL, init: RequestInit | undefined) => { status?: number; body?: unknown } | undefined;

export function fakeApi(routes: Record<string, Handler | unknown>) {
  const calls: Array<{ method: string; url: URL; body: unknown; headers: Record<string, string> }> = [];
  const fetchFn = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input), "http://localhost");
    const method = (init?.method ?? "GET").toUpperCase();
    calls.push({
      method,
      url,
      body: init?.body ? JSON.parse(String(init.body)) : undefined,
      headers: (init?.headers ?? {}) as Record<string, string>,
    });
    for (const [key, h] of Object.entries(routes)) {
      const [m, pattern] = key.split(" ");
      if (m !== method || !new RegExp(`^${pattern}$`).test(url.pathname)) continue;
      const r = typeof h === "function" ? (h as Handler)(url, init) : { body: h };
      if (!r) continue;
      return new Response(r.body === undefined ? null : JSON.stringify(r.body), { status: r.status ?? 200 });
    }
    return new Response(JSON.stringify({ detail: `no fake for ${method} ${url.pathname}` }), { status: 404 });
  });
  vi.stubGlobal("fetch", fetchFn);
  return calls;
}

export const GiB = 1024 ** 3;
export const ME = {
  user: { id: "u1", email: "ada@example.com", display_name: "Ada" },
  org_id: "o1",
  org_name: "Example",
  role: "owner",
  memberships: [
    { org_id: "o1", org_name: "Example", role: "owner" },
    { org_id: "o2", org_name: "Other", role: "viewer" },
  ],
  csrf_token: "tok",
};

/** A server curve: hit = 0.1 per GiB up to 9 GiB (a line, so expected values are arithmetic). */
export function serverCurve(classes = 3) {
  const sizes = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((g) => g * GiB);
  return {
    server: {
      id: "s1", cluster_id: "c1", address: "10.0.0.7:11211", instance_id: "i", version: "1.6.18", limit_maxbytes: 4 * GiB,
      settings: {}, hostname: "cache-07", agent_version: "0.1.0", first_seen_at: "2026-01-01T00:00:00Z",
      last_seen_at: "2026-01-01T00:00:00Z", last_snapshot_at: "2026-01-01T00:00:00Z",
    },
    latest_snapshot: null,
    classes: Array.from({ length: classes }, (_, i) => ({
      class_id: i + 1, chunk_size: 96 * (i + 1), pages: 10, items: 1000, requests: 1000 - i, current_items: 1000,
      sizes_items: [500, 1000, 2000], sizes_bytes: [500, 1000, 2000].map((v) => v * 96 * (i + 1)), hit_ratios: [0.2, 0.4, 0.5],
    })),
    merged: {
      snapshot_id: "x", window_end: "2026-01-01T00:00:00Z", computed_at: "2026-01-01T00:00:00Z", age_seconds: 10,
      sizes_bytes: sizes,
      hit_ratio_proportional: sizes.map((b) => (b / GiB) * 0.09),
      hit_ratio_optimal: null,
      hit_ratio_calibrated: sizes.map((b) => (b / GiB) * 0.1),
      band_low: sizes.map((b) => (b / GiB) * 0.1 - 0.02),
      band_high: sizes.map((b) => (b / GiB) * 0.1 + 0.02),
      current_bytes: 4 * GiB, measured_hit_ratio: 0.4, predicted_hit_ratio: 0.4, calibration: {},
      advice: { moves: [{ from_class: 1, to_class: 2, pages: 3, hit_gain: 0.004 }], gain_pp: 0.4 },
    },
  };
}

export const CLUSTER = {
  id: "c1", name: "web", price_per_gb_month: 10, target_hit_ratio: 0.65, node_size_bytes: null,
  created_at: "2026-01-01T00:00:00Z", server_count: 1,
};

/** The sizing answer the fake API gives for a line curve (hit = 0.1 per GiB), like the real one:
 * up to 90 % at 9 GiB; above that a lower bound (above_curve). */
export function sizingFor(url: URL, extra: Partial<Schemas["SizingAnswer"]> = {}): { body: Schemas["SizingAnswer"] } {
  const t = Number(url.searchParams.get("target_hit_ratio"));
  const ok = t <= 0.9;
  const mem = t * 10 * GiB;
  return {
    body: {
      subject: { type: "server", id: "s1" }, question: "memory_for_hit_ratio", status: ok ? "ok" : "above_curve",
      basis: "calibrated", policy: null, target_hit_ratio: t, memory_bytes: ok ? Math.round(mem) : null,
      memory_limit_bytes: ok ? Math.ceil(mem / 2 ** 20) * 2 ** 20 : null,
      current_memory_limit_bytes: 4 * GiB, used_bytes: 4 * GiB,
      memory_bytes_at_least: ok ? null : 9 * GiB,
      band: {
        memory_bytes_min: ok ? Math.round((t - 0.02) * 10 * GiB) : 9 * GiB,
        memory_bytes_max: ok ? Math.round((t + 0.02) * 10 * GiB) : null,
        hit_rate_min: t - 0.02, hit_rate_max: t + 0.02, confidence: 0.9,
        basis: "server_record", graded_predictions: 12, drift_pp: 0.6, nodes_min: null, nodes_max: null,
      },
      recommended_memory_limit_bytes: ok ? Math.ceil(mem / 2 ** 20) * 2 ** 20 : null, stable: ok,
      fill_ratio: 1, full_in_seconds: null,
      curve: {
        computed_at: "2026-01-01T00:00:00Z", window_end: "2026-01-01T00:00:00Z", age_seconds: 42, current_bytes: 4 * GiB,
        measured_hit_ratio: 0.4, max_bytes: 9 * GiB, max_hit_ratio: 0.9,
      },
      message: ok ? "ok" : `a hit rate of ${(t * 100).toFixed(1)} % needs more than 9 GiB`,
      ...extra,
    },
  };
}
