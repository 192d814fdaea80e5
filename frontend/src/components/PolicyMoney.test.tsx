import { expect, test } from "vitest";
import { named } from "./PolicyMoney";

test("the API's words name each policy as the page does", () => {
  const label = (p: string) => ({ "nbq-clock": "NbQ-CLOCK", gdwheel: "GD-Wheel", lru: "LRU" })[p] ?? p;
  expect(named("at 85 % nbq-clock needs the least memory; at 785 MiB gdwheel's misses cost the least", ["lru", "gdwheel", "nbq-clock"], label)).toBe(
    "at 85 % NbQ-CLOCK needs the least memory; at 785 MiB GD-Wheel's misses cost the least",
  );
  // a name inside another word is left alone
  expect(named("clockwise", ["clock"], () => "CLOCK")).toBe("clockwise");
});
