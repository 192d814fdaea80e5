import { afterEach, expect, test, vi } from "vitest";
import { CLUSTER, fakeApi, GiB } from "../test/fakeApi";
import { listClusters, listServers } from "./endpoints";

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
};

test("listClusters takes the summary from GET /clusters without asking per cluster", async () => {
  const calls = fakeApi({ "GET /api/v1/clusters": [SUMMARY, { ...CLUSTER, id: "c2", name: "idle", measured_hit_ratio: null, allocated_bytes: null, memory_for_target_bytes: null, memory_for_target_status: null, curve_window_end: null, open_alerts: 0, open_critical_alerts: 0 }] });
  const [c, idle] = await listClusters();
  expect(calls.map((x) => x.url.pathname)).toEqual(["/api/v1/clusters"]);
  expect(c).toMatchObject({ allocatedBytes: 4 * GiB, measuredHitRatio: 0.6, neededBytes: 6.5 * GiB, openAlerts: 2, status: "warning" });
  // $10 per GiB-month: 4 GiB now, 6.5 GiB at the target
  expect(c.monthlyCostNow).toBeCloseTo(40, 6);
  expect(c.monthlyCostAtTarget).toBeCloseTo(65, 6);
  expect(idle).toMatchObject({ status: "no_data", neededBytes: null, allocatedBytes: null });
});

test("listClusters marks an unreachable target and a critical alert from the summary", async () => {
  fakeApi({ "GET /api/v1/clusters": [{ ...SUMMARY, memory_for_target_bytes: null, memory_for_target_status: "unreachable", open_critical_alerts: 1 }] });
  const [c] = await listClusters();
  expect(c).toMatchObject({ neededBytes: null, neededUnreachable: true, status: "critical" });
});

test("listClusters falls back to curve, sizing and alerts against a backend without the summary", async () => {
  const calls = fakeApi({
    "GET /api/v1/clusters": [CLUSTER],
    "GET /api/v1/alerts": [],
    "GET /api/v1/clusters/c1/curve": { cluster: CLUSTER, sizes_bytes: [GiB, 2 * GiB], hit_ratios: [0.5, 0.7], current_bytes: GiB, measured_hit_ratio: 0.7 },
    "GET /api/v1/sizing/clusters/c1/memory": { status: "ok", memory_bytes: 1.5 * GiB },
  });
  const [c] = await listClusters();
  expect(c).toMatchObject({ allocatedBytes: GiB, measuredHitRatio: 0.7, neededBytes: 1.5 * GiB, status: "ok", openAlerts: 0 });
  expect(calls.some((x) => x.url.pathname === "/api/v1/sizing/clusters/c1/memory")).toBe(true);
});

const now = () => new Date(Date.now() - 30_000).toISOString();
const SERVER = {
  id: "s1", cluster_id: "c1", address: "10.0.0.1:11211", instance_id: "i", version: "1.6", limit_maxbytes: GiB, settings: {},
  hostname: null, agent_version: "0.1", first_seen_at: "2026-01-01T00:00:00Z",
};

test("listServers reads loss, hit rate and curve error from GET /servers when present", async () => {
  const calls = fakeApi({
    "GET /api/v1/servers": [{ ...SERVER, last_seen_at: now(), last_snapshot_at: now(), loss_ratio: 0.08, measured_hit_ratio: 0.9, curve_error_pp: 1.5 }],
    "GET /api/v1/clusters": [CLUSTER],
  });
  const [s] = await listServers();
  expect(s).toMatchObject({ lossRatio: 0.08, measuredHitRatio: 0.9, curveError: 1.5, status: "warning", statusNote: "events lost", clusterName: "web" });
  expect(calls.filter((x) => x.url.pathname.startsWith("/api/v1/servers/")).length).toBe(0);
});

test("listServers falls back to history and accuracy per server without the summary", async () => {
  const calls = fakeApi({
    "GET /api/v1/servers": [{ ...SERVER, last_seen_at: now(), last_snapshot_at: now() }],
    "GET /api/v1/clusters": [CLUSTER],
    "GET /api/v1/servers/s1/history": { points: [{ measured_hit_ratio: 0.7, loss_ratio: 0 }] },
    "GET /api/v1/servers/s1/accuracy": { mean_abs_error_pp: 6 },
  });
  const [s] = await listServers();
  expect(s).toMatchObject({ lossRatio: 0, measuredHitRatio: 0.7, curveError: 6, status: "warning", statusNote: "curve drifting" });
  expect(calls.filter((x) => x.url.pathname.startsWith("/api/v1/servers/s1/")).length).toBe(2);
});
