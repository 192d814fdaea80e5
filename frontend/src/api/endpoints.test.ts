import { afterEach, expect, test, vi } from "vitest";
import { CLUSTER, fakeApi, GiB } from "../test/fakeApi";
import { forgetCsrfToken } from "./client";
import { getHistory, listClusters, listServers } from "./endpoints";

afterEach(() => vi.unstubAllGlobals());

const SUMMARY = {
  ...CLUSTER,
  measured_hit_ratio: 0.6,
  allocated_bytes: 4 * GiB,
  memory_for_target_bytes: 6.5 * GiB,
  memory_for_target_status: "ok",
  curve_window_end: "2026-11-22T12:00:00Z",
  open_alerts: 2,
  open_critical_alerts: 0,
  status: "warning",
};

test("listClusters takes the summary from GET /clusters without asking per cluster", async () => {
  const calls = fakeApi({ "GET /api/v1/clusters": [SUMMARY, { ...CLUSTER, id: "c2", name: "idle", measured_hit_ratio: null, allocated_bytes: null, memory_for_target_bytes: null, memory_for_target_status: null, curve_window_end: null, open_alerts: 0, open_critical_alerts: 0, status: "no_data" }] });
  const [c, idle] = await listClusters();
  expect(calls.map((x) => x.url.pathname)).toEqual(["/api/v1/clusters"]);
  expect(c).toMatchObject({ allocatedBytes: 4 * GiB, measuredHitRatio: 0.6, neededBytes: 6.5 * GiB, openAlerts: 2, status: "warning" });
  // $10 per GiB-month: 4 GiB now, 6.5 GiB at the target
  expect(c.monthlyCostNow).toBeCloseTo(40, 6);
  expect(c.monthlyCostAtTarget).toBeCloseTo(65, 6);
  expect(idle).toMatchObject({ status: "no_data", neededBytes: null, allocatedBytes: null });
});

test("listClusters marks an unreachable target and a critical alert from the summary", async () => {
  fakeApi({ "GET /api/v1/clusters": [{ ...SUMMARY, memory_for_target_bytes: null, memory_for_target_status: "unreachable", open_critical_alerts: 1, status: "critical" }] });
  const [c] = await listClusters();
  expect(c).toMatchObject({ neededBytes: null, neededUnreachable: true, status: "critical" });
});

const now = () => new Date(Date.now() - 30_000).toISOString();
const SERVER = {
  id: "s1", cluster_id: "c1", address: "10.0.0.1:11211", instance_id: "i", version: "1.6", limit_maxbytes: GiB, settings: {},
  hostname: null, agent_version: "0.1", first_seen_at: "2026-01-01T00:00:00Z",
};

test("listServers shows GET /servers' status and warnings as they are, asking nothing per server", async () => {
  const calls = fakeApi({
    "GET /api/v1/servers": [
      { ...SERVER, last_seen_at: now(), last_snapshot_at: now(), loss_ratio: 0.08, measured_hit_ratio: 0.9, curve_error_pp: 1.5,
        status: "warning", status_note: "events lost", loss_warning: true, curve_error_warning: false },
      // The API's word stands even where the figures alone would say otherwise: nothing is re-derived.
      { ...SERVER, id: "s2", last_seen_at: now(), last_snapshot_at: now(), loss_ratio: 0, measured_hit_ratio: 0.7, curve_error_pp: 0.5,
        status: "critical", status_note: "agent silent", loss_warning: false, curve_error_warning: false },
      { ...SERVER, id: "s3", last_seen_at: now(), last_snapshot_at: null },
    ],
    "GET /api/v1/clusters": [CLUSTER],
  });
  const [s, silent, fresh] = await listServers();
  expect(s).toMatchObject({ lossRatio: 0.08, lossWarning: true, measuredHitRatio: 0.9, curveError: 1.5, curveErrorWarning: false, status: "warning", statusNote: "events lost", clusterName: "web" });
  expect(silent).toMatchObject({ status: "critical", statusNote: "agent silent", lossWarning: false });
  expect(fresh).toMatchObject({ status: "no_data", lossRatio: null, curveError: null, lossWarning: false });
  expect(calls.filter((x) => x.url.pathname.startsWith("/api/v1/servers/")).length).toBe(0);
});

test("history points sit at their period's newest window, not at its start or middle", async () => {
  // a 5-minute period whose newest window ended 40 s before the period's end (the 7-day view)
  const point = { start: "2026-11-22T12:00:00Z", end: "2026-11-22T12:05:02Z", at: "2026-11-22T12:04:22Z", samples: 5 };
  const page = { start: "2026-11-15T12:05:02Z", end: "2026-11-22T12:05:02Z", bucket_seconds: 302 };
  fakeApi({
    "GET /api/v1/servers/s1/history": { ...page, points: [{ ...point, measured_hit_ratio: 0.9, predicted_hit_ratio: 0.89, loss_ratio: 0, bytes_used: 1, flagged: 0 }] },
    "GET /api/v1/servers/s1/accuracy": { ...page, samples: 5, mean_abs_error_pp: 1, max_abs_error_pp: 1, points: [{ ...point, measured_hit_ratio: 0.9, predicted_hit_ratio: 0.89, error_pp: 1, abs_error_pp: 1 }] },
    "GET /api/v1/servers/s1/curves": { ...page, curves: [] },
  });
  const h = await getHistory("server", "s1", 168);
  expect(h.measured[0].time).toBe("2026-11-22T12:04:22Z");
  expect(h.accuracy[0].time).toBe("2026-11-22T12:04:22Z");
  expect(h.bucketSeconds).toBe(302);
});

test("a late 401 to the session probe forgets only the CSRF cookie it was sent with, not a newer session's", () => {
  document.cookie = "hitcurve_csrf=newer; path=/";
  forgetCsrfToken("ended"); // the probe went out with the ended session's cookie; a mailed link logged in meanwhile
  expect(document.cookie).toContain("hitcurve_csrf=newer");
  forgetCsrfToken("newer");
  expect(document.cookie).not.toContain("hitcurve_csrf");
});
