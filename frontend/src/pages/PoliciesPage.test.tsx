import { render, screen, waitFor } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";
import type { Session } from "../api/types";
import { SessionContext } from "../session";
import { fakeApi } from "../test/fakeApi";
import { PoliciesPage, comparedAt } from "./PoliciesPage";

afterEach(() => vi.unstubAllGlobals());
const MiB = 2 ** 20;
const session: Session = { user: { id: "u", email: "a@b.c", name: null }, orgs: [{ id: "o1", name: "x", role: "viewer" }], currentOrgId: "o1" };

test("the table compares below the sample's footprint, and says why when today's memory is above it", () => {
  const sizes = [4, 8, 16, 32, 48, 64, 96, 128].map((x) => x * MiB);
  expect(comparedAt(sizes, 64 * MiB, 200 * MiB)).toEqual({ at: 64 * MiB, why: null });
  const c = comparedAt(sizes, 64 * MiB, 45 * MiB);
  expect(c.at).toBe(32 * MiB);
  expect(c.why).toMatch(/at 64\sMiB every policy holds the whole sample \(45\sMiB of keys\).*compared at 32\sMiB/);
  expect(comparedAt(sizes, 64 * MiB, 2 * MiB).why).toMatch(/cannot differ/);
});

const runRow = (status: string, results: unknown[] = []) => ({
  id: "r1", server_id: "s1", cluster_id: null, policies: ["lru", "fifo"], sizes_bytes: [8 * MiB], window_start: "2026-12-01T00:00:00Z",
  window_end: "2026-12-02T00:00:00Z", status, progress: status === "done" ? 1 : 0, error: null, created_at: "2026-12-02T00:00:00Z",
  enqueued_at: null, started_at: null, finished_at: null, results,
});
const result = (policy: string, hit: number) => ({
  policy, size_bytes: 8 * MiB, hit_ratio: hit, byte_hit_ratio: hit, recompute_cost_total_us: 1e6, recompute_cost_p99_us: 1, requests: 1000,
  details: {
    sample_rate: 0.01, sampled_requests: 8000, sampled_keys: 900, span_seconds: 3600, notes: [],
    period_start_us: Date.UTC(2026, 11, 1, 10) * 1000, period_end_us: Date.UTC(2026, 11, 1, 11) * 1000, sim_warmup: 0.2,
    footprint_bytes: 40 * MiB, recompute: "recompute time: the summed delay between each miss and its refill",
  },
});

test("a finished run shows as done in the run list, its period, warm-up and what the recompute time covers", async () => {
  let polls = 0;
  const money = {
    run_id: "r1", target_hit_ratio: 0.9, memory_bytes: 8 * MiB, message: "at 90 % fifo needs the least memory, 3.00 a month less than LRU",
    prices: { memory_per_gib_month: 4, miss_cost_per_million: 1, reads_per_second: 100 },
    rows: [
      { policy: "lru", memory_bytes_for_target: 16 * MiB, memory_per_month_for_target: 12, memory_saving_per_month: null,
        hit_ratio_at: 0.6, misses_per_month_at: 105.12, misses_saving_per_month: null },
      { policy: "fifo", memory_bytes_for_target: null, memory_bytes_for_target_at_least: 8 * MiB, memory_per_month_for_target: null,
        memory_saving_per_month: null, hit_ratio_at: 0.55, misses_per_month_at: 118.26, misses_saving_per_month: -13.14 },
    ],
  };
  const calls = fakeApi({
    "GET /api/v1/simulations/r1/cost": () => ({ body: money }),
    "GET /api/v1/simulations": () => ({ body: [runRow("pending"), { ...runRow("done"), id: "r0", policies: ["lru"], created_at: "2026-12-01T00:00:00Z" }] }),
    "GET /api/v1/simulations/r1": () => ({ body: ++polls < 2 ? runRow("running") : runRow("done", [result("lru", 0.6), result("fifo", 0.55)]) }),
    "GET /api/v1/simulations/r0": () => ({ body: { ...runRow("done"), id: "r0", policies: ["lru"] } }),
    "GET /api/v1/servers/s1/curve": () => ({ status: 404, body: { code: "no_curve", detail: "none" } }),
  });
  render(
    <SessionContext.Provider value={{ session, setSession: () => undefined }}>
      <PoliciesPage kind="server" id="s1" />
    </SessionContext.Provider>,
  );
  const list = await screen.findByTestId("run-list");
  expect(list.textContent).toMatch(/LRU, FIFO · (pending|running)/); // as listed, or as first polled
  await waitFor(() => expect(list.textContent).toMatch(/LRU, FIFO · done/));
  expect(list.textContent).not.toContain("pending");
  expect((await screen.findByTestId("run-period")).textContent).toMatch(/Replayed: .* to .*first 20\s% of it only warms the simulated caches/);
  expect(screen.getByTestId("recompute-what").textContent).toMatch(/^Recompute time: the summed delay between each miss and its refill/);
  // in money: the API's rows at the size the table compares at, nothing computed here
  const table = await screen.findByTestId("policy-money-table");
  expect(calls.find((c) => c.url.pathname === "/api/v1/simulations/r1/cost")?.url.searchParams.get("memory_bytes")).toBe(String(8 * MiB));
  expect(screen.getByTestId("policy-money-message").textContent).toBe(money.message.replace("fifo", "FIFO"));
  const lru = table.querySelector('tr[data-policy="lru"]')!.textContent!;
  expect(lru).toMatch(/16(\.0)?\sMiB.*\$12.*\$105/);
  const fifo = table.querySelector('tr[data-policy="fifo"]')!.textContent!;
  expect(fifo).toMatch(/more than 8(\.0)?\sMiB.*\$118\+\$13/);
});
