import { render, screen } from "@testing-library/react";
import { expect, test } from "vitest";
import { StatusBadge } from "./Bits";

test("a warning with no open alert says it is the hit rate below target, not an alert", () => {
  const { rerender } = render(<StatusBadge status="warning" openAlerts={0} />);
  expect(screen.getByText("Below target")).toBeTruthy();
  rerender(<StatusBadge status="warning" openAlerts={2} />);
  expect(screen.getByText("Warning")).toBeTruthy();
  rerender(<StatusBadge status="ok" openAlerts={0} />);
  expect(screen.getByText("OK")).toBeTruthy();
});
