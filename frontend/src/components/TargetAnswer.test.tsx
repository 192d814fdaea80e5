import { render } from "@testing-library/react";
import { expect, test } from "vitest";
import { sizing } from "../api/endpoints";
import { MiB } from "../lib/format";
import { sizingFor } from "../test/fakeApi";
import { keepFlags, TargetAnswer } from "./TargetAnswer";

test("every -m N and (-m) is kept on one line, and no other hyphen", () => {
  // the reports page at 390 px broke "the memory limit (-m) for" after the hyphen
  const { container } = render(<p>{keepFlags("the e-mail: the memory limit (-m) for each target, -m 68 on each of 3 nodes")}</p>);
  expect([...container.querySelectorAll("span.nowrap")].map((s) => s.textContent)).toEqual(["(-m)", "-m 68"]);
  expect(container.textContent).toBe("the e-mail: the memory limit (-m) for each target, -m 68 on each of 3 nodes");
});

test("a cluster's recommended limit says it is per node, as the -m beside it does", () => {
  // the seeded web-cache read "Recommended -m 227 (settling)" beside "-m 834 on each of 2 nodes"
  const j = sizingFor(new URL("http://x/?target_hit_ratio=0.85"), {
    subject: { type: "cluster", id: "c1" }, nodes: 2, memory_limit_bytes: 834 * MiB, recommended_memory_limit_bytes: 834 * MiB, stable: false,
  }).body;
  const { getByText } = render(<TargetAnswer sizing={sizing(j, 0.85, null)} pending={false} />);
  const rec = getByText("Recommended for autoscaling").nextElementSibling as HTMLElement;
  expect(rec.textContent).toBe("-m 834 on each of 2 nodes (settling)");
  const set = getByText("memcached -m to set").nextElementSibling as HTMLElement;
  expect(set.textContent).toBe("-m 834 on each of 2 nodes");
});
