import { fireEvent, render, screen } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";
import type { Session } from "../api/types";
import { SessionContext } from "../session";
import { fakeApi } from "../test/fakeApi";
import { ClustersPage } from "./ClustersPage";

afterEach(() => vi.unstubAllGlobals());
const session: Session = { user: { id: "u", email: "a@b.c", name: null }, orgs: [{ id: "o1", name: "x", role: "viewer" }], currentOrgId: "o1" };

test("a failing API shows its reason and a retry that asks again", async () => {
  let fail = true;
  const calls = fakeApi({
    "GET /api/v1/clusters": () => (fail ? { status: 503, body: { detail: "database unavailable" } } : { body: [] }),
    "GET /api/v1/alerts": [],
    "GET /api/v1/servers": [],
  });
  render(
    <SessionContext.Provider value={{ session, setSession: () => undefined }}>
      <ClustersPage />
    </SessionContext.Provider>,
  );
  expect((await screen.findByRole("alert")).textContent).toContain("database unavailable");
  fail = false;
  fireEvent.click(screen.getByRole("button", { name: "Try again" }));
  expect(await screen.findByText("No agent has reported yet")).toBeTruthy();
  expect(calls.filter((c) => c.url.pathname === "/api/v1/clusters").length).toBeGreaterThanOrEqual(2);
  // A viewer cannot create clusters.
  expect(screen.queryByText("New cluster")).toBeNull();
});
