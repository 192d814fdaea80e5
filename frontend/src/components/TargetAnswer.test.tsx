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

test("a cluster has one -m to set, per node; this window's own -m beside it says what it is", () => {
  // the seeded web-cache read "Recommended -m 227 (settling)" beside "-m 834 on each of 2 nodes"; the
  // demo "-m 69" beside "Recommended for autoscaling -m 72"
  const note = "this window's curve alone says -m 820 on each of 2 nodes; the -m to set holds until 3 windows in a row leave its ±10 % band";
  const j = sizingFor(new URL("http://x/?target_hit_ratio=0.85"), {
    subject: { type: "cluster", id: "c1" }, nodes: 2, memory_limit_bytes: 820 * MiB, recommended_memory_limit_bytes: 834 * MiB, stable: false,
    memory_limit_note: note,
  }).body;
  const { getByText, queryByText, getByTestId } = render(<TargetAnswer sizing={sizing(j, 0.85, null)} pending={false} />);
  expect(queryByText("Recommended for autoscaling")).toBeNull();
  const set = getByText("memcached -m to set").nextElementSibling as HTMLElement;
  expect(set.textContent?.startsWith("-m 834 on each of 2 nodes (settling)")).toBe(true);
  expect(getByTestId("answer-window-limit").textContent?.trim()).toBe(`T${note.slice(1)}.`);
  expect(getByTestId("target-answer").textContent).toContain("(-m 834 on each of 2 nodes)");
});

test("today's -m inside the answer's band reads 'at the edge' in the API's words; an unknown answer says nothing about it", () => {
  // the demo: -m 64 today, -m 66 to set, band -m 62 – 69: the edge, no alert (hitcurve/rules/shortage.py)
  const words = "at the edge: within the estimate's band (-m 62 – 69); today's -m 64 lies inside it, so the estimate cannot tell whether it falls short: no alert";
  const j = sizingFor(new URL("http://x/?target_hit_ratio=0.9"), {
    recommended_memory_limit_bytes: 66 * MiB, memory_state: "at_edge", memory_state_words: words,
  }).body;
  const { getByTestId, unmount } = render(<TargetAnswer sizing={sizing(j, 0.9, null)} pending={false} />);
  const line = getByTestId("answer-memory-state");
  expect(line.dataset.state).toBe("at_edge");
  expect(line.textContent).toBe(`A${words.slice(1)}.`);
  unmount();
  const unknown = sizingFor(new URL("http://x/?target_hit_ratio=0.9"), { status: "unknown", memory_state: null, memory_state_words: null }).body;
  const { queryByTestId } = render(<TargetAnswer sizing={sizing(unknown, 0.9, null)} pending={false} />);
  expect(queryByTestId("answer-memory-state")).toBeNull();
});
