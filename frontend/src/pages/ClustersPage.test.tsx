import { fireEvent, render, screen } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";
import type { Schemas } from "../api/call";
import type { Session } from "../api/types";
import { SessionContext } from "../session";
import { fakeApi } from "../test/fakeApi";
import { sizing } from "../api/endpoints";
import { answerSentence } from "../components/TargetAnswer";
import { MEASURED_HIT_RATE, MEASURED_HIT_RATE_MEANS, MEMORY_LIMIT } from "../lib/format";
import { ClustersPage } from "./ClustersPage";

afterEach(() => vi.unstubAllGlobals());
const session: Session = { user: { id: "u", email: "a@b.c", name: null }, orgs: [{ id: "o1", name: "x", role: "viewer" }], currentOrgId: "o1" };

test("a failing API shows its reason and a retry that asks again", async () => {
  let fail = true;
  const calls = fakeApi({
    "GET /api/v1/clusters": () => (fail ? { status: 503, body: { detail: "database unavailable" } } : { body: [] }),
    "GET /api/v1/alerts": [],
    "GET /api/v1/servers": [],
  });
  render(
    <SessionContext.Provider value={{ session, setSession: () => undefined }}>
      <ClustersPage />
    </SessionContext.Provider>,
  );
  expect((await screen.findByRole("alert")).textContent).toContain("database unavailable");
  fail = false;
  fireEvent.click(screen.getByRole("button", { name: "Try again" }));
  expect(await screen.findByText("No agent has reported yet")).toBeTruthy();
  expect(calls.filter((c) => c.url.pathname === "/api/v1/clusters").length).toBeGreaterThanOrEqual(2);
  // A viewer cannot create clusters.
  expect(screen.queryByText("New cluster")).toBeNull();
});

const MiB = 2 ** 20;
const warmingAnswer: Schemas["SizingAnswer"] = {
  subject: { type: "cluster", id: "c1" },
  question: "memory_for_hit_ratio",
  status: "warming_up",
  basis: "calibrated",
  policy: null,
  target_hit_ratio: 0.9,
  // unknown until memcached is full: the API gives no memory figure, -m or bound
  memory_bytes: null,
  memory_limit_bytes: null,
  unknown_until: "unknown until memcached is full (memcached still filling: 41\u00a0MiB of 128\u00a0MiB, full in about 4 min)",
  nodes: 2,
  current_memory_limit_bytes: 128 * MiB,
  used_bytes: 41 * MiB,
  fill_ratio: 41 / 128,
  full_in_seconds: 240,
  band: { memory_bytes_min: null, memory_bytes_max: null, confidence: 0.9 },
  curve: {
    computed_at: "2026-01-01T00:00:00Z", window_end: "2026-01-01T00:00:00Z", age_seconds: 3, current_bytes: 41 * MiB,
    measured_hit_ratio: 0.7, max_bytes: 64 * MiB, max_hit_ratio: 0.95,
  },
  message: "memcached still filling",
};

test("a warming cluster's card says how full memcached is and that the need is unknown, with no number", async () => {
  fakeApi({
    "GET /api/v1/clusters": [
      {
        id: "c1", name: "web", target_hit_ratio: 0.9, price_per_gb_month: 5, server_count: 2, status: "warming_up",
        measured_hit_ratio: 0.7, allocated_bytes: 41 * MiB, memory_for_target_bytes: null,
        memory_for_target_status: "warming_up", open_alerts: 0, target_answer: warmingAnswer,
      },
    ],
    "GET /api/v1/servers": [],
  });
  render(
    <SessionContext.Provider value={{ session, setSession: () => undefined }}>
      <ClustersPage />
    </SessionContext.Provider>,
  );
  const warm = await screen.findByTestId("cluster-warming");
  expect(warm.textContent?.replace(/\u00a0/g, " ")).toBe("memcached still filling — 41 MiB of 128 MiB, full in about 4 min.");
  expect(screen.getByText("Warming up")).toBeTruthy();
  const needed = screen.getByTestId("cluster-needed").textContent?.replace(/\u00a0/g, " ");
  expect(needed).toBe("Unknown until memcached is full (memcached still filling: 41 MiB of 128 MiB, full in about 4 min)");
  expect(needed).not.toMatch(/-m \d|more than/);
  // the measured hit rate under its one name (as the servers table and the curve page write it)
  const name = screen.getByText(MEASURED_HIT_RATE);
  expect(name.getAttribute("title")).toBe(MEASURED_HIT_RATE_MEANS);
  expect(name.nextElementSibling?.textContent?.replace(/\u00a0/g, " ")).toContain("70 % target 90 %");
});

test("the card's need and change are the cluster page's: the -m in all against today's limit", async () => {
  // the seeded web-cache: curve 1.6 GiB for 85 % over 1.0 GiB of item pages today, -m 834 on each of
  // 2 nodes over a limit of 1152 MiB; the card said "+610 MiB" where the page said "+516 MiB"
  const answer: Schemas["SizingAnswer"] = {
    ...warmingAnswer, status: "ok", target_hit_ratio: 0.85, memory_bytes: 1747763973, memory_limit_bytes: 834 * MiB,
    recommended_memory_limit_bytes: 834 * MiB, unknown_until: null,
    current_memory_limit_bytes: 1152 * MiB, used_bytes: 1100 * MiB, fill_ratio: 1, full_in_seconds: null,
    curve: { ...warmingAnswer.curve, current_bytes: 1108344832, age_seconds: 3, max_bytes: 2 * 2 ** 30 },
  };
  fakeApi({
    "GET /api/v1/clusters": [
      {
        id: "c1", name: "web-cache", target_hit_ratio: 0.85, price_per_gb_month: 4.5, server_count: 2, status: "ok",
        measured_hit_ratio: 0.76, allocated_bytes: 1108344832, memory_for_target_bytes: 1747763973,
        memory_for_target_status: "ok", open_alerts: 0, target_answer: answer,
      },
    ],
    "GET /api/v1/servers": [],
  });
  render(
    <SessionContext.Provider value={{ session, setSession: () => undefined }}>
      <ClustersPage />
    </SessionContext.Provider>,
  );
  const plain = (s: string | null | undefined) => (s ?? "").replace(/\u00a0/g, " ").replace(/\u2212/g, "-");
  const needed = plain((await screen.findByTestId("cluster-needed")).textContent);
  const page = plain(answerSentence(sizing(answer, 0.85, 4.5)));
  expect(page).toContain("needs 1.6 GiB (-m 834 on each of 2 nodes), +516 MiB");
  expect(needed).toBe("1.6 GiB +516 MiB · -m 834 on each of 2 nodes");
  // today's limit and the bytes in use under their one names, as the cluster page gives them
  expect(screen.getByText("all nodes", { exact: false }).textContent).toBe(`${MEMORY_LIMIT}, all nodes`);
  expect(plain(screen.getByTestId("cluster-limit").textContent)).toBe("1.1 GiB · Used 1.1 GiB · 2 servers");
});
