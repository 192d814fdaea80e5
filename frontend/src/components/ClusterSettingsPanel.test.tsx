import { describe, expect, it } from "vitest";
import { parsePrefixCosts } from "./ClusterSettingsPanel";

describe("parsePrefixCosts", () => {
  it("reads one prefix = cost a line, skipping blank lines", () => {
    expect(parsePrefixCosts("page = 40\n\n  sess=0.5  \nuser:profile = 3")).toEqual({ page: 40, sess: 0.5, "user:profile": 3 });
    expect(parsePrefixCosts("  \n")).toEqual({});
  });
  it("keeps an = inside a prefix name (the last one separates the cost)", () => {
    expect(parsePrefixCosts("a=b = 2")).toEqual({ "a=b": 2 });
  });
  it("names the line it cannot read", () => {
    expect(() => parsePrefixCosts("page = 40\nsess")).toThrow(/line 2 \(“sess”\)/);
    expect(() => parsePrefixCosts("page = lots")).toThrow(/line 1/);
    expect(() => parsePrefixCosts("= 4")).toThrow(/line 1/);
    expect(() => parsePrefixCosts("page =")).toThrow(/line 1/);
  });
});
