import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";
import type { PrefixRow } from "../api/types";
import { fakeApi } from "../test/fakeApi";
import { PoolSplitPanel } from "./PoolSplitPanel";

afterEach(() => vi.unstubAllGlobals());
const MiB = 2 ** 20;
const row = (prefix: string, other = false): PrefixRow => ({
  prefix, other, requests: 1000, requestShare: 0.5, hitRatio: 0.7, bytes: MiB, memoryShare: 0.5,
  memoryForTarget: null, curveStep: other ? null : 0.3 * MiB, left: null,
});
const pt = (x: number, hit: number) => ({ prefix_bytes: x, rest_bytes: 8 * MiB - x, hit_ratio: hit, prefix_hit_ratio: 0.8, rest_hit_ratio: 0.75 });
// the backend's answer shape (schemas/breakdown.py SplitOut), figures of bench_split's small prefix
function answer(url: URL, passed = true) {
  const x = Number(url.searchParams.get("prefix_bytes") ?? 0);
  return {
    body: {
      prefix: url.searchParams.get("prefix"),
      request_share: 0.5, occupancy_share: 0.12, today_bytes: 8 * MiB, total_bytes: 8 * MiB,
      pooled_hit_ratio: 0.768, measured_hit_ratio: 0.768,
      today_split: pt(MiB, 0.768), best: pt(2 * MiB, 0.8064), chosen: x ? pt(x, 0.7738) : null, gain_pp: 3.84,
      points: [pt(MiB, 0.768), pt(2 * MiB, 0.8064), pt(4 * MiB, 0.7738)],
      rest_known_up_to: 20 * MiB,
      check: { prefix_curve_at_occupancy: 0.674, prefix_measured_hit_ratio: 0.6739, diff_pp: passed ? 0.03 : -24.5, tolerance_pp: 3, passed },
      calibration_scale: 1.18, model: "…",
    },
  };
}

test("the split panel asks for the chosen prefix and split, and says whether a separate pool wins", async () => {
  const calls = fakeApi({ "GET /api/v1/servers/s1/breakdown/split": (u: URL) => answer(u) });
  render(<PoolSplitPanel id="s1" prefixes={[row("small"), row("big"), row("(other)", true)]} />);
  const best = await screen.findByTestId("split-best");
  expect(best.textContent).toContain("A separate pool wins");
  expect(best.textContent).toMatch(/small alone in 2\.0\sMiB .* rest in 6\.0\sMiB/);
  expect(best.textContent).toContain("+3.8 pp");
  expect(calls[0].url.searchParams.get("prefix")).toBe("small");
  expect(calls[0].url.searchParams.get("prefix_bytes")).toBeNull();
  // "(other)" has no curve: not offered
  const select = screen.getByLabelText("Prefix to give its own pool") as HTMLSelectElement;
  expect([...select.options].map((o) => o.value)).toEqual(["small", "big"]);
  fireEvent.change(select, { target: { value: "big" } });
  await waitFor(() => expect(calls.some((c) => c.url.searchParams.get("prefix") === "big")).toBe(true));
  // a chosen split is asked for in bytes of today's total
  fireEvent.change(screen.getByLabelText("Share of the memory for the prefix's pool, percent"), { target: { value: "25" } });
  expect((await screen.findByTestId("split-chosen")).textContent).toMatch(/big alone in 2\.0\sMiB/);
  expect(calls.at(-1)!.url.searchParams.get("prefix_bytes")).toBe(String(2 * MiB));
});

test("a window whose prefix curve fails its check says the split is not to be trusted", async () => {
  fakeApi({ "GET /api/v1/servers/s1/breakdown/split": (u: URL) => answer(u, false) });
  render(<PoolSplitPanel id="s1" prefixes={[row("small")]} />);
  const check = await screen.findByTestId("split-check");
  expect(check.textContent).toContain("Not to be trusted");
  expect(check.textContent).toContain("-24.5 pp");
});

test("a window with a single prefix says quietly that there is nothing to split", async () => {
  fakeApi({
    "GET /api/v1/servers/s1/breakdown/split": () => ({
      status: 422,
      body: {
        code: "no_rest",
        detail: [{ loc: ["query", "prefix"], msg: "prefix 'only' carries 5000 of the window's 5010 reads; the rest had 10", type: "no_rest" }],
      },
    }),
  });
  render(<PoolSplitPanel id="s1" prefixes={[row("only"), row("(other)", true)]} />);
  const quiet = await screen.findByTestId("split-nothing");
  expect(quiet.textContent).toContain("Nothing to split in this window: prefix 'only' carries 5000");
  expect(screen.queryByRole("alert")).toBeNull();
  expect(document.body.textContent).not.toContain("Something went wrong");
});
