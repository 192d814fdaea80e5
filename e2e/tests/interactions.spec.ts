import { test } from "@playwright/test";
import { api, expect, linkFromMail, logIn, plain, serverId, shots } from "./helpers";

test("hover reads the curve out; brushing zooms, and Reset zoom restores the full range", async ({ page }) => {
  await logIn(page);
  const id = await serverId(page, "10.0.0.7:11211");
  await page.goto(`/servers/${id}`);
  const chart = page.getByTestId("curve-chart");
  await expect(chart.locator("path.curve")).toHaveCount(1);
  // The chart sits below the answer, which may push it past the viewport's bottom: bring it into
  // view, as a user scrolls to it, so the pointer lands on it (a move outside the viewport hovers
  // nothing).
  await chart.scrollIntoViewIfNeeded();
  const box = (await chart.boundingBox())!;
  const lastTick = async () => plain(await chart.locator(".layer-x-axis .tick text").last().textContent());
  const before = await lastTick();

  // Hover in the middle of the plot: the readout names a memory size and a hit rate.
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
  await expect(chart.locator("g.hover-box text")).toHaveText(/\d.*(MiB|GiB) → \d+(\.\d)?\s%/);

  // Brush from 20 % to 45 % of the width: the axis now ends well below the full range.
  await page.mouse.move(box.x + box.width * 0.2, box.y + box.height * 0.5);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.45, box.y + box.height * 0.5, { steps: 6 });
  await page.mouse.up();
  await expect(page.getByTestId("reset-zoom")).toBeVisible();
  expect(await lastTick()).not.toBe(before);
  await page.screenshot({ path: "artifacts/server-curve-zoomed.png" });
  await page.getByTestId("reset-zoom").click();
  await expect(page.getByTestId("reset-zoom")).toHaveCount(0);
  expect(await lastTick()).toBe(before);
});

test("starting a simulation posts the chosen policies and shows the new run waiting for a worker", async ({ page }) => {
  await logIn(page);
  const id = await serverId(page, "10.0.0.9:11211");
  await page.goto(`/servers/${id}/policies`);
  await expect(page.getByText("No simulation yet")).toBeVisible();
  await page.getByLabel("CLOCK-Pro").check();
  const posted = page.waitForRequest((r) => r.url().endsWith("/api/v1/simulations") && r.method() === "POST");
  await page.getByTestId("start-run").click();
  const body = (await posted).postDataJSON();
  expect(body.server_id).toBe(id);
  expect(body.policies).toEqual(["lru", "gdwheel", "nbq-clock", "clockpro"]);
  expect(body.sizes_bytes.length).toBe(8);
  await expect(page.getByTestId("run-progress")).toContainText("waiting for a worker");
  const runs = await api<Array<{ status: string }>>(page, `/simulations?server_id=${id}`);
  expect(runs[0].status).toBe("pending");
});

test("a new visitor signs up, confirms the mailed link and lands on an empty organization with install instructions", async ({ page }) => {
  const started = Date.now();
  const email = `fresh-${started}@example.com`;
  await page.goto("/signup");
  await page.getByLabel("Organization name").fill("Fresh Co");
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill("a long enough password");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByRole("heading", { name: "Check your inbox" })).toBeVisible();
  await shots(page, "signup-check-inbox");
  // not an account yet: the password does not log in before the link is followed
  const early = await page.request.post("/api/v1/auth/login", { data: { email, password: "a long enough password" } });
  expect(early.status()).toBe(401);
  await page.goto(await linkFromMail(email, "/signup/confirm/", started));
  await expect(page.getByText("No agent has reported yet")).toBeVisible();
  await expect(page.getByTestId("org-switch")).toHaveValue(/.+/);
  await expect(page.getByTestId("org-switch").locator("option")).toHaveText(["Fresh Co"]);
});
