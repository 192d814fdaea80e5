import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";
import type { PrefixRow } from "../api/types";
import { fakeApi } from "../test/fakeApi";
import { TtlWhatIfPanel } from "./TtlWhatIfPanel";

afterEach(() => vi.unstubAllGlobals());
const MiB = 2 ** 20;
const row = (prefix: string, ttlWhatIf: boolean, other = false): PrefixRow => ({
  prefix, other, requests: 1000, requestShare: 0.5, hitRatio: 0.61, bytes: MiB, memoryShare: 0.5,
  memoryForTarget: null, curveStep: other ? null : 0.3 * MiB, left: null, ttlWhatIf,
});
// the backend's answer shape (schemas/breakdown.py TtlWhatIfOut); reachable unless ttl_s is 1
function answer(url: URL) {
  const ttl = Number(url.searchParams.get("ttl_s"));
  const reachable = ttl !== 1;
  return {
    body: {
      prefix: url.searchParams.get("prefix"), ttl_s: ttl, request_share: 0.5, measured_hit_ratio: 0.611,
      held_bytes: 2 * MiB, server_measured_hit_ratio: 0.786, allowed_hit_ratio_today: 0.615,
      allowed_hit_ratio: reachable ? 0.708 : 0.41, live_bytes_today: 0.19 * MiB, live_bytes: 0.28 * MiB,
      prefix_hit_ratio: reachable ? 0.704 : 0.41, server_hit_ratio: reachable ? 0.830 : 0.69,
      server_hit_ratio_unbounded: 0.831, memory_for_today_hit_ratio: reachable ? 1.5 * MiB : null,
      memory_change_bytes: reachable ? -0.5 * MiB : null, reachable, bound: ttl > 3, sampled_reads: 5200, sample_rate: 1,
      grid: [{ ttl_s: 1, allowed_hit_ratio: 0.41, live_bytes: 0.1 * MiB }], windows_note: null,
      gaps: "touch/gat TTL changes are not in the watch stream; …", model: "…",
      server_id: "s1", snapshot_id: "x", window_end: "2026-11-26T22:00:00Z",
    },
  };
}

test("the TTL panel asks for the chosen prefix and TTL and reads the answer", async () => {
  const calls = fakeApi({ "GET /api/v1/servers/s1/breakdown/ttl": (u: URL) => answer(u) });
  render(<TtlWhatIfPanel id="s1" prefixes={[row("user", false), row("sess", true), row("(other)", false, true)]} />);
  const hit = await screen.findByTestId("ttl-hit");
  // 60 s allows more than today's TTL: the in-memory figures are bounds, said so
  expect(hit.textContent).toMatch(/TTL of 60 s, sess would hit at least 70\.4\s?% in the 2\.0\sMiB it holds today/);
  expect(hit.textContent).toMatch(/server at least 83(\.0)?\s?% \(today 78\.6\s?%\)/);
  expect(screen.getByTestId("ttl-memory").textContent).toMatch(/need at most 1\.5\sMiB \(−512(\.0)?\sKiB against today\)/);
  // only prefixes that carry the what-if are offered
  const select = screen.getByLabelText("Prefix whose TTL to change") as HTMLSelectElement;
  expect([...select.options].map((o) => o.value)).toEqual(["sess"]);
  expect(calls[0].url.searchParams.get("prefix")).toBe("sess");
  expect(calls[0].url.searchParams.get("ttl_s")).toBe("60");
  // a TTL that caps the prefix below today: said so, no memory figure
  fireEvent.change(screen.getByLabelText("New TTL, seconds"), { target: { value: "1" } });
  await waitFor(() => expect(screen.getByTestId("ttl-memory").textContent).toContain("out of reach at 1 s"));
  expect(calls.at(-1)!.url.searchParams.get("ttl_s")).toBe("1");
});

test("a TTL that is not whole seconds in range is not sent", async () => {
  const calls = fakeApi({ "GET /api/v1/servers/s1/breakdown/ttl": (u: URL) => answer(u) });
  render(<TtlWhatIfPanel id="s1" prefixes={[row("sess", true)]} />);
  await screen.findByTestId("ttl-hit");
  const n = calls.length;
  for (const v of ["1.5", "0", "70000"]) {
    fireEvent.change(screen.getByLabelText("New TTL, seconds"), { target: { value: v } });
    expect(screen.getByTestId("ttl-invalid").textContent).toContain("whole number of seconds from 1 to 65536");
  }
  await new Promise((r) => setTimeout(r, 600));
  expect(calls.length).toBe(n);
});

test("no prefix with a TTL what-if: no panel", () => {
  fakeApi({});
  const { container } = render(<TtlWhatIfPanel id="s1" prefixes={[row("user", false)]} />);
  expect(container.textContent).toBe("");
});
