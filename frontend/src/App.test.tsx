import { render, screen } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";
import { App } from "./App";

afterEach(() => vi.unstubAllGlobals());

test("shows the service status from the health endpoint", async () => {
  vi.stubGlobal(
    "fetch",
    vi.fn(async () => new Response(JSON.stringify({ status: "ok", version: "0.1.0", checks: {} }))),
  );
  render(<App />);
  expect((await screen.findByTestId("health")).textContent).toBe("Service ok (v0.1.0)");
});
