import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";
import type { Session } from "../api/types";
import { SessionContext } from "../session";
import { CLUSTER, fakeApi, serverCurve, sizingFor } from "../test/fakeApi";
import { CurvePage } from "./CurvePage";

afterEach(() => vi.unstubAllGlobals());
// The answers arrive after a debounce and a fetch: generous deadlines for a loaded machine.
vi.setConfig({ testTimeout: 30_000 });

const session: Session = { user: { id: "u", email: "a@b.c", name: null }, orgs: [{ id: "o1", name: "x", role: "owner" }], currentOrgId: "o1" };
const plain = (s: string | null) => (s ?? "").replace(/\u00a0/g, " ").replace(/\u2212/g, "-");

function renderPage(classes = 3, sizing: (u: URL) => unknown = sizingFor, curve: unknown = serverCurve(classes)) {
  const calls = fakeApi({
    "GET /api/v1/servers/s1/curve": curve,
    "GET /api/v1/clusters/c1": CLUSTER,
    "GET /api/v1/sizing/servers/s1/memory": sizing,
  });
  render(
    <SessionContext.Provider value={{ session, setSession: () => undefined }}>
      <CurvePage kind="server" id="s1" />
    </SessionContext.Provider>,
  );
  return calls;
}

test("states the sizing API's answer for the cluster's target, with memory and cost deltas", async () => {
  renderPage();
  const answer = await screen.findByTestId("target-answer");
  // Target 65 % (the cluster's) → the API says 6.5 GiB; today 4 GiB; price $10/GiB-month.
  // generous deadline: the answer arrives after a debounce and a fetch, slow on a loaded machine
  await waitFor(() => expect(plain(answer.textContent)).toBe("65 % hit rate needs 6.5 GiB (-m 6656), +2.5 GiB, +$25/month"));
  expect(Number(answer.getAttribute("data-bytes"))).toBe(6656 * 2 ** 20);
  const facts = plain(document.querySelector(".answer-facts")!.textContent);
  expect(facts).toContain("memcached -m to set-m 6656");
  expect(facts).toContain("Likely range (90 % confidence)6.3 GiB – 6.7 GiB from 12 graded predictions of this server");
  expect(facts).toContain("-m 6656 (stable)");
});

test("a new server's band says it rests on the benchmark's error until a prediction is graded", async () => {
  const band = { memory_bytes_min: 6 * 2 ** 30, memory_bytes_max: 7 * 2 ** 30, hit_rate_min: 0.6, hit_rate_max: 0.7, confidence: 0.9, basis: "benchmark_prior" as const, graded_predictions: 0, drift_pp: 0.7 };
  renderPage(3, (u) => sizingFor(u, { band }));
  const range = await screen.findByTestId("answer-band");
  expect(range.getAttribute("data-band-basis")).toBe("benchmark_prior");
  expect(plain(range.textContent)).toBe("6.0 GiB – 7.0 GiB from the benchmark's prediction error: no prediction of this server graded yet");
});

test("a warming server says how full memcached is and that the answer is unknown until then, with no number", async () => {
  const until = "unknown until memcached is full (memcached still filling: 41\u00a0MiB of 64\u00a0MiB, full in about 4 min)";
  renderPage(3, (u) =>
    sizingFor(u, {
      status: "warming_up", fill_ratio: 0.64, full_in_seconds: 240, used_bytes: 41 * 2 ** 20, current_memory_limit_bytes: 64 * 2 ** 20,
      memory_bytes: null, memory_limit_bytes: null, recommended_memory_limit_bytes: null, stable: null, unknown_until: until,
    }),
  );
  const warm = await screen.findByTestId("warming");
  expect(plain(warm.textContent)).toBe("memcached still filling — 41 MiB of 64 MiB, full in about 4 min. The answer settles once memcached's memory is full.");
  expect(plain(screen.getByTestId("target-answer").textContent)).toBe(
    "65 % hit rate: unknown until memcached is full (memcached still filling: 41 MiB of 64 MiB, full in about 4 min).",
  );
  expect(plain(document.querySelector(".target-panel")!.textContent)).not.toMatch(/-m \d|more than \d/);
  expect(screen.getByTestId("target-answer").textContent).not.toContain("beyond");
});

test("typing a target asks the API again and says when the curve cannot reach it", async () => {
  const calls = renderPage();
  await screen.findByTestId("target-answer");
  fireEvent.change(screen.getByTestId("target-input"), { target: { value: "95" } });
  await waitFor(
    () => expect(plain(screen.getByTestId("target-answer").textContent)).toBe("95 % hit rate needs more than 9.0 GiB (the curve reaches 90 % at 9.0 GiB)."),
  );
  expect(screen.getByTestId("target-answer").getAttribute("data-status")).toBe("above_curve");
  expect(plain(document.querySelector(".answer")!.textContent)).toContain("larger --ghost-factor");
  const asked = calls.filter((c) => c.url.pathname.endsWith("/memory")).map((c) => c.url.searchParams.get("target_hit_ratio"));
  expect(asked).toContain("0.95");
});

test("the table view lists the chart's points, today's size marked", async () => {
  renderPage();
  await screen.findByTestId("curve-chart");
  fireEvent.click(screen.getByTestId("show-table"));
  const rows = screen.getByTestId("curve-table").querySelectorAll("tbody tr");
  expect(rows.length).toBe(9);
  expect(plain(rows[3].textContent)).toContain("4.0 GiB");
  expect(plain(rows[3].textContent)).toContain("4.0 GiB40 %");
  expect(rows[3].className).toBe("is-current");
});

test("past the agent's ghost reach the table gives lower bounds and the chart fades the curve", async () => {
  const curve = serverCurve();
  // the API's merged curve: the ghost sees out to 6 GiB so far (observed_max_bytes)
  (curve.merged as Record<string, unknown>).observed_max_bytes = 6 * 2 ** 30;
  renderPage(3, sizingFor, curve);
  const svg = await screen.findByTestId("curve-chart");
  expect(svg.querySelector("path.curve-unobserved")).not.toBeNull();
  expect(plain(document.querySelector(".target-panel")!.textContent)).toContain("Observed up to 6.0 GiB so far");
  expect(plain(document.querySelector(".target-panel")!.textContent)).toContain("lower bounds (a larger agent --ghost-factor sees further)");
  fireEvent.click(screen.getByTestId("show-table"));
  const rows = screen.getByTestId("curve-table").querySelectorAll("tbody tr");
  expect(plain(rows[5].textContent)).toContain("6.0 GiB60 %");
  expect(rows[5].getAttribute("data-bound")).toBeNull();
  expect(plain(rows[7].textContent)).toContain("at least 80 %");
  expect(plain(rows[7].textContent)).toContain("not observed yet");
  expect(rows[7].getAttribute("data-bound")).toBe("at-least");
});

test("draws the curve, the band, the measured point and one small multiple per class", async () => {
  renderPage(40);
  const svg = await screen.findByTestId("curve-chart");
  expect(svg.querySelector("path.curve")).not.toBeNull();
  expect(svg.querySelector("path.band")).not.toBeNull();
  expect(svg.querySelector("circle.measured")).not.toBeNull();
  expect(svg.querySelector("circle.target-point")).not.toBeNull();
  expect(document.querySelectorAll("figure.small-multiple").length).toBe(40);
  expect(plain(screen.getByTestId("advice").textContent)).toContain("move 3 pages of 1 MiB from 1 class to 1 class");
  // the gain column holds each move's own gain
  const row = screen.getByTestId("advice").querySelector("tbody tr")!;
  expect(plain(row.textContent)).toMatch(/\+0\.40 pp/);
  // memcached 1.6.18: no manual slabs reassign (it can crash before 1.6.42)
  expect(plain(screen.getByTestId("advice-how").textContent)).toContain("Do not move pages by hand");
  expect(screen.getByTestId("advice-how").textContent).not.toContain("slabs reassign 1 2");
});

test("a server without a curve yet shows how to install an agent", async () => {
  fakeApi({
    "GET /api/v1/servers/s2/curve": { ...serverCurve(0), merged: null, classes: [] },
    "GET /api/v1/clusters/c1": CLUSTER,
  });
  await act(async () => {
    render(<CurvePage kind="server" id="s2" />);
  });
  expect(await screen.findByText("No agent has reported yet")).toBeTruthy();
});

test("a server whose newest windows were quiet says the chart rests on the good windows, as the answer", async () => {
  const curve = serverCurve(3) as { merged: Record<string, unknown> };
  curve.merged.windows_note = "from 5 windows; 2 newer windows left out (quiet)";
  renderPage(3, sizingFor, curve);
  const note = await screen.findByTestId("windows-note");
  expect(note.textContent).toContain("2 newer windows left out (quiet)");
});

test("a bound above the curve also names the -m memcached needs more than", async () => {
  renderPage(3, (u) => sizingFor(u, Number(u.searchParams.get("target_hit_ratio")) > 0.9 ? { memory_limit_bytes_at_least: 9.5 * 2 ** 30 } : {}));
  await screen.findByTestId("target-answer");
  fireEvent.change(screen.getByTestId("target-input"), { target: { value: "95" } });
  await waitFor(
    () => expect(plain(screen.getByTestId("target-answer").textContent)).toBe("95 % hit rate needs more than 9.0 GiB, -m above 9728 (the curve reaches 90 % at 9.0 GiB)."),
  );
});

test("the header gives today's memory as the answer names it: one limit, one used, the curve's x said as such", async () => {
  // the seeded 10.0.0.7: the header said "today 785 MiB" (the curve's x: item pages) above the
  // answer's "-m today 832 MiB" (limit_maxbytes)
  const MiB = 2 ** 20;
  const curve = serverCurve(3);
  curve.merged.current_bytes = 785 * MiB;
  renderPage(3, (u) => sizingFor(u, { current_memory_limit_bytes: 832 * MiB, used_bytes: 820 * MiB }), curve);
  await screen.findByTestId("target-answer");
  const head = screen.getByTestId("memory-today");
  await waitFor(() => expect(plain(head.textContent)).toBe("Memory limit (-m) 832 MiB · Used 820 MiB, 785 MiB of it holding items (the chart's now)"));
  const facts = plain(document.querySelector(".answer-facts")!.textContent);
  expect(facts).toContain("Memory limit (-m)832 MiB · Used 820 MiB");
  expect(plain(document.querySelector(".view-head")!.textContent)).not.toMatch(/today \d/);
});

test("a cluster without a curve says what it waits for, not that no agent has reported", async () => {
  for (const [count, says] of [
    [1, "from its server's first processed snapshots"],
    [3, "from its 3 servers' first processed snapshots"],
    [0, "This cluster has no server yet"],
  ] as const) {
    fakeApi({ "GET /api/v1/clusters/c1/curve": { cluster: { ...CLUSTER, server_count: count } } });
    let view: ReturnType<typeof render> | undefined;
    await act(async () => {
      view = render(<CurvePage kind="cluster" id="c1" />);
    });
    expect(await screen.findByText(new RegExp(says))).toBeTruthy();
    expect(screen.queryByText("No agent has reported yet")).toBeNull();
    view!.unmount();
  }
});
