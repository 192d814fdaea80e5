import { expect, test } from "vitest";
import { sizingCurl, validMemcachedAddress } from "./snippets";

test("sizing requests use real ids when there are some", () => {
  expect(sizingCurl("http://x", "hct_1")).toContain("Bearer hct_1");
  expect(sizingCurl("http://x", null)).toContain("http://x/api/v1/sizing/clusters/<cluster id>/memory?target_hit_ratio=0.92");
  const real = sizingCurl("http://x", null, { clusterId: "c-1", serverId: "s-2" });
  expect(real).toContain("/sizing/clusters/c-1/memory");
  expect(real).toContain("/sizing/servers/s-2/memory");
  expect(real).not.toContain("<cluster id>");
});

test("memcached addresses as the agent accepts them", () => {
  for (const ok of ["127.0.0.1:11211", "cache-07.internal:11211", "[::1]:11211", "/run/memcached.sock"]) {
    expect(validMemcachedAddress(ok)).toBe(true);
  }
  for (const bad of ["", "10.0.0.7", "10.0.0.7:0", "10.0.0.7:70000", "a b:1", "http://x:1"]) {
    expect(validMemcachedAddress(bad)).toBe(false);
  }
});
