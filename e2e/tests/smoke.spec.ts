import { expect, test } from "@playwright/test";

test("the dashboard is served by the backend and reaches the API", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("health")).toContainText("Service ok");
  await page.screenshot({ path: "artifacts/smoke.png", fullPage: true });
});
