import { test } from "@playwright/test";
import { api, expect, logIn, plain } from "./helpers";

// The cost view on a cluster's page: with no miss cost it says what it needs; a miss cost entered
// in the cluster's settings makes the view state the API's own answer (words, chart, node types,
// the serverless maximum for the cluster's target and the catalogue's date). Screenshots at 1440
// and 390 px.
type Serverless = { status: string; message: string; data_storage_maximum_gb: number | null };
type Cost = {
  status: string;
  message: string;
  optimal_memory_bytes: number | null;
  catalogue_as_of: string | null;
  points: unknown[];
  serverless: Serverless | null;
  prefix_costs: Array<{ prefix: string; read_share: number }>;
};

test("the cost view states the cost answer the API gives", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await logIn(page);
  const clusters = await api<Array<{ id: string; name: string }>>(page, "/clusters");
  const web = clusters.find((c) => c.name === "web-cache")!;
  await page.goto(`/clusters/${web.id}`);
  const view = page.getByTestId("cost-view");
  await expect(view.getByTestId("cost-message")).toContainText("needs a miss cost");

  const panel = page.getByTestId("cluster-settings");
  await panel.getByRole("button", { name: "Edit settings" }).click();
  const form = page.getByTestId("cluster-settings-form");
  await form.getByLabel("Miss cost per million").fill("0.05");
  // the user prefix's misses (from a server's breakdown window) at 10x the rest's
  await form.getByLabel("Miss cost per prefix").fill("user = 0.5");
  await form.getByRole("button", { name: "Save" }).click();
  await expect(panel.getByTestId("cluster-miss-cost")).toContainText("per million misses");

  const a = await api<Cost>(page, `/sizing/clusters/${web.id}/cost`);
  const message = view.getByTestId("cost-message");
  await expect(message).toHaveAttribute("data-status", a.status);
  // the words are the API's; only the curve's age ("254 s old") moves between the two reads
  const ageless = (t: string | null) => plain(t).replace(/\d+ s old/, "N s old");
  expect(ageless(await message.textContent())).toBe(ageless(a.message));
  if (a.points.length) await expect(view.getByTestId("cost-chart").locator("path.cost-total")).toHaveCount(1);
  if (a.status === "ok") {
    await expect(view.getByTestId("cost-chart").locator("line.cost-optimum")).toHaveCount(1);
    await expect(view.getByTestId("cost-nodes")).toContainText("× cache.");
  }
  // the priced prefix, from the servers' breakdown windows, listed as the API gives it
  expect(a.prefix_costs.map((p) => p.prefix)).toEqual(["user"]);
  await expect(view.getByTestId("cost-prefixes")).toContainText("user: $0.50 per million misses");
  await expect(view.getByTestId("cost-catalogue")).toContainText(`catalogue of ${a.catalogue_as_of}, from`);
  // the serverless answer for the cluster's target needs no miss cost: always there, the API's words
  expect(a.serverless, "a cluster's cost answer has its serverless maximum").not.toBeNull();
  const sl = view.getByTestId("cost-serverless");
  await expect(sl).toHaveAttribute("data-status", a.serverless!.status);
  expect(ageless(await sl.locator("p").textContent())).toBe(ageless(a.serverless!.message));
  if (a.serverless!.data_storage_maximum_gb !== null)
    await expect(sl.getByTestId("serverless-max")).toHaveText(`${a.serverless!.data_storage_maximum_gb} GB`);
  const shots = process.env.HITCURVE_E2E_SHOTS ?? "artifacts";
  await view.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${shots}/cost-view-1440.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await view.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${shots}/cost-view-390.png`, fullPage: true });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, "the cost view at 390 px scrolls sideways").toBeLessThanOrEqual(0);
});
