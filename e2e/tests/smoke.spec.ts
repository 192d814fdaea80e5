import { expect, test } from "@playwright/test";

test("the dashboard is served by the backend and asks an anonymous visitor to log in", async ({ page }) => {
  const health = await page.request.get("/api/v1/health");
  expect((await health.json()).status).toBe("ok");
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Log in" })).toBeVisible();
  await page.screenshot({ path: "artifacts/login.png", fullPage: true });
});
