import { fireEvent, render, screen } from "@testing-library/react";
import { expect, test, vi } from "vitest";
import { ApiError } from "../api/client";
import { ErrorState } from "./States";

test("an address that names nothing says so and links on, without a Try again that finds nothing", () => {
  // /servers/<removed id>: the curve endpoint's 404; /servers/abc: a 422 on the path's id
  for (const error of [
    new ApiError(404, "server not found", { detail: "server not found", code: "not_found" }),
    new ApiError(422, "server_id: Input should be a valid UUID", {
      detail: [{ loc: ["path", "server_id"], msg: "Input should be a valid UUID", type: "uuid_parsing" }],
      code: "invalid_request",
    }),
  ]) {
    const { unmount } = render(<ErrorState error={error} retry={() => undefined} />);
    expect(screen.getByRole("alert").textContent).toContain("another organization");
    expect(screen.queryByRole("button", { name: "Try again" })).toBeNull();
    expect(screen.getByRole("link", { name: "Servers" }).getAttribute("href")).toBe("/servers");
    expect(screen.getByRole("link", { name: "Clusters" }).getAttribute("href")).toBe("/");
    unmount();
  }
});

test("other failures show their reason and can be tried again", () => {
  const retry = vi.fn();
  render(<ErrorState error={new ApiError(503, "The service failed (HTTP 503). Try again in a moment.")} retry={retry} />);
  expect(screen.getByRole("alert").textContent).toContain("The service failed (HTTP 503)");
  fireEvent.click(screen.getByRole("button", { name: "Try again" }));
  expect(retry).toHaveBeenCalled();
});
