import { render, screen } from "@testing-library/react";
import { expect, test } from "vitest";
import type { FlashTier } from "../api/types";
import { FlashTierPanel } from "./FlashTierPanel";

const note =
  "This server has a flash tier (extstore: 256\u00a0MiB of flash, 75\u00a0% full); 16\u00a0% of its hits came from flash. " +
  "The curve and these answers are for RAM (-m) with this flash tier as it is; what a different flash size would give " +
  "(a two-tier curve) is not computed yet";

const tier = (over: Partial<FlashTier> = {}): FlashTier => ({
  limitBytes: 256 << 20,
  bytesUsed: 10 << 20,
  fillRatio: 0.75,
  headerItems: 10922,
  headerBytes: 10922 * 96,
  flashHitShare: 0.16,
  flashMissShare: 0,
  readsPerS: 653.3,
  readBytesPerS: 474947.8,
  writesPerS: 1536,
  writeBytesPerS: 1543270,
  windows: 10,
  note,
  ...over,
});

test("the flash tier: the API's note word for word, its size, fill, headers, share of hits and rates", () => {
  render(<FlashTierPanel tier={tier()} />);
  expect(screen.getByTestId("flash-note").textContent).toBe(note);
  const text = screen.getByTestId("flash-tier").textContent!;
  expect(text).toContain("256\u00a0MiB · 75\u00a0% full · 10\u00a0MiB live");
  expect(text).toContain("10,922 items · 1.0\u00a0MiB");
  expect(text).toContain("Hits from flash16\u00a0%");
  expect(text).toContain("653/s · 464\u00a0KiB/s");
  expect(text).toContain("1,536/s · 1.5\u00a0MiB/s");
  expect(text).not.toContain("missed");
});

test("flash reads that missed are said, as memcached's hits that were misses for the client", () => {
  render(<FlashTierPanel tier={tier({ flashMissShare: 0.05, readsPerS: null })} />);
  const text = screen.getByTestId("flash-tier").textContent!;
  expect(text).toContain("flash reads that missed 5\u00a0% (memcached counts them as hits)");
  expect(text).toContain("Flash reads—");
});
