import { render, screen, waitFor } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";
import { fakeApi, GiB } from "../test/fakeApi";
import { HistoryPage } from "./HistoryPage";

afterEach(() => vi.unstubAllGlobals());

const empty = { start: "2026-11-15T00:00:00Z", end: "2026-11-22T00:00:00Z", bucket_seconds: 3600, points: [] };
const acc = { ...empty, samples: 0, mean_abs_error_pp: null, max_abs_error_pp: null };
const curve = (day: number, top: number) => ({
  window_end: `2026-11-${String(15 + day).padStart(2, "0")}T12:00:00Z`,
  computed_at: `2026-11-${String(15 + day).padStart(2, "0")}T12:00:05Z`,
  basis: "calibrated",
  sizes_bytes: [1 * GiB, 2 * GiB, 4 * GiB],
  hit_ratios: [top - 0.2, top - 0.1, top],
  current_bytes: 2 * GiB,
  measured_hit_ratio: top - 0.1,
});

test("draws one path per stored curve, asking the curves endpoint for the period", async () => {
  const calls = fakeApi({
    "GET /api/v1/servers/s1/history": empty,
    "GET /api/v1/servers/s1/accuracy": acc,
    "GET /api/v1/servers/s1/curves": { ...empty, curves: [curve(0, 0.8), curve(3, 0.85), curve(6, 0.9)] },
  });
  render(<HistoryPage kind="server" id="s1" />);
  const svg = await screen.findByTestId("history-curves");
  await waitFor(() => expect(svg.querySelectorAll("path.series").length).toBe(3));
  // Newest drawn opaque, oldest lighter; each path spans the curve's points (not empty).
  const paths = [...svg.querySelectorAll("path.series")];
  expect(Number(paths[2].getAttribute("stroke-opacity"))).toBe(1);
  expect(Number(paths[0].getAttribute("stroke-opacity"))).toBeLessThan(1);
  for (const p of paths) expect(p.getAttribute("d")).toMatch(/^M[\d.]+,[\d.]+L/);
  expect(screen.getByTestId("history-curves-legend").textContent).toContain("3 curves");
  const asked = calls.find((c) => c.url.pathname === "/api/v1/servers/s1/curves")!;
  expect(asked.url.searchParams.get("start")).not.toBeNull();
  expect(Number(asked.url.searchParams.get("max_curves"))).toBeGreaterThan(1);
});
