import { expect, test } from "vitest";
import { agentConfig, agentInstall, sizingCurl } from "./snippets";

test("the agent config uses the option names the agent parses", () => {
  const c = agentConfig("https://h.example.com");
  // Every non-comment line is `name = value` with a name the agent's --help lists.
  const known = ["memcached", "backend-url", "agent-key-file", "spool-dir", "interval", "trace-rate"];
  for (const line of c.split("\n").filter((l) => !l.startsWith("#"))) {
    expect(line).toMatch(/^[a-z-]+ = \S+$/);
    expect(known).toContain(line.split(" = ")[0]);
  }
  expect(c).toContain("backend-url = https://h.example.com");
});

test("the install snippet embeds the key when it is known, a placeholder otherwise", () => {
  expect(agentInstall("hca_abc")).toContain("'hca_abc'");
  expect(agentInstall(null)).toContain("hca_…");
  expect(sizingCurl("http://x", "hct_1")).toContain("Bearer hct_1");
  expect(sizingCurl("http://x", null)).toContain("http://x/api/v1/sizing/clusters/<cluster id>/memory?target_hit_ratio=0.92");
});
