import { expect, test } from "@playwright/test";

test("the dashboard is served by the backend and asks an anonymous visitor to log in", async ({ page }) => {
  const health = await page.request.get("/api/v1/health");
  expect(health.status()).toBe(200);
  const body = await health.json();
  expect(body.checks.database.ok && body.checks.redis.ok).toBe(true);
  // No worker runs beside the browser checks: the service says so instead of "ok".
  if (body.checks.workers.alive === 0) {
    expect(body.status).toBe("degraded");
    expect(body.checks.workers.error).toContain("no worker heartbeat");
  }
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Log in" })).toBeVisible();
  await page.screenshot({ path: "artifacts/login.png", fullPage: true });
});
