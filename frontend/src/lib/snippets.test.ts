import { expect, test } from "vitest";
import { agentConfig, agentInstall, sizingCurl, validMemcachedAddress } from "./snippets";

// The option names are checked against the real agent by e2e/tests/onboarding.spec.ts, which
// runs bin/hitcurve-agent with the configuration the page shows.
test("the agent config carries the backend and the memcached address", () => {
  const c = agentConfig("https://h.example.com", "10.0.0.7:11211");
  for (const line of c.split("\n")) expect(line).toMatch(/^[a-z-]+ = \S+$/);
  expect(c).toContain("backend-url = https://h.example.com");
  expect(c).toContain("memcached = 10.0.0.7:11211");
});

test("the install block embeds the key when it is known, a placeholder otherwise", () => {
  const opts = { backendUrl: "https://h", memcached: "10.0.0.7:11211" };
  const withKey = agentInstall({ ...opts, key: "hca_abc" });
  expect(withKey).toContain("echo 'hca_abc' | sudo install -m 600 -o hitcurve");
  expect(withKey).toContain("memcached = 10.0.0.7:11211");
  expect(withKey).toContain("dpkg -i");
  expect(agentInstall({ ...opts, key: null })).toContain("hca_…");
});

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
