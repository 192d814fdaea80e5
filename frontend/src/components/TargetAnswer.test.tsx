import { render } from "@testing-library/react";
import { expect, test } from "vitest";
import { keepFlags } from "./TargetAnswer";

test("every -m N and (-m) is kept on one line, and no other hyphen", () => {
  // the reports page at 390 px broke "the memory limit (-m) for" after the hyphen
  const { container } = render(<p>{keepFlags("the e-mail: the memory limit (-m) for each target, -m 68 on each of 3 nodes")}</p>);
  expect([...container.querySelectorAll("span.nowrap")].map((s) => s.textContent)).toEqual(["(-m)", "-m 68"]);
  expect(container.textContent).toBe("the e-mail: the memory limit (-m) for each target, -m 68 on each of 3 nodes");
});
