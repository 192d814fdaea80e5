import { render, screen } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";
import { fakeApi } from "../test/fakeApi";
import { BreakdownPage } from "./BreakdownPage";

afterEach(() => vi.unstubAllGlobals());

// the backend's answer shape (schemas/breakdown.py BreakdownOut), trimmed to one prefix
const breakdown = (windowsNote: string | null) => ({
  server_id: "s1", snapshot_id: "n1", window_start: "2026-11-26T12:00:00Z", window_end: "2026-11-26T12:01:00Z",
  windows_note: windowsNote, target: 0.9, prefix_rule: "before ':'",
  prefixes: [{ prefix: "user", other: false, requests: 5000, request_share: 1, hit_ratio: 0.8, bytes: 2 ** 20, memory_share: 1,
    memory_for_target: 2 ** 21, curve_step: 2 ** 16, points: [[2 ** 20, 0.8], [2 ** 21, 0.9]], left: null }],
  hot_keys_hashed: true, hot_keys: [], hot_keys_by_bytes: [], ttl: null, classes: [],
  left: { expired: 0, evicted: 0, deleted: 0, evicted_by_page_moves: 0 },
});

test("says which newer windows the breakdown left out, and nothing when it rests on the newest", async () => {
  fakeApi({ "GET /api/v1/servers/s1/breakdown": breakdown("2 newer windows left out (quiet, stream loss)") });
  render(<BreakdownPage id="s1" />);
  const note = await screen.findByTestId("breakdown-windows-note");
  expect(note.textContent).toBe("The newest good window (2 newer windows left out (quiet, stream loss)).");
});

test("a breakdown from the newest window carries no note", async () => {
  fakeApi({ "GET /api/v1/servers/s2/breakdown": breakdown(null) });
  render(<BreakdownPage id="s2" />);
  await screen.findByTestId("prefix-table");
  expect(screen.queryByTestId("breakdown-windows-note")).toBeNull();
});

test("the window's end reads as every other page's times (24-hour, no seconds), not the browser's locale string", async () => {
  // 21:41:44 local time on Nov 26 (not today): "Nov 26, 21:41", where toLocaleString gave "11/26/2026, 9:41:44 PM"
  const end = new Date(2026, 10, 26, 21, 41, 44).toISOString();
  fakeApi({ "GET /api/v1/servers/s3/breakdown": { ...breakdown(null), window_end: end } });
  render(<BreakdownPage id="s3" />);
  const line = await screen.findByTestId("breakdown-window");
  expect(line.textContent).toBe("Window ending Nov 26, 21:41 · prefix rule: before ':'");
});
