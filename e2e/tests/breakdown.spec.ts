import { test } from "@playwright/test";
import { api, expect, logIn, plain, serverId } from "./helpers";

type Breakdown = {
  prefixes: Array<{ prefix: string; other: boolean; requests: number; memory_for_target: number | null }>;
  hot_keys: Array<{ key: string }>;
  ttl: { saved_ratio: number | null } | null;
  left: { expired: number; evicted: number };
};

test.beforeEach(async ({ page }) => logIn(page));

async function open(page: import("@playwright/test").Page) {
  const id = await serverId(page, "10.0.0.9:11211");
  await page.goto(`/servers/${id}/breakdown`);
  await expect(page.getByTestId("prefix-table")).toBeVisible();
  return id;
}

test("breakdown: prefix table, TTL memory, hot keys and expired vs evicted match the API", async ({ page }) => {
  const id = await open(page);
  const b = await api<Breakdown>(page, `/servers/${id}/breakdown?target=0.9`);
  const rows = page.getByTestId("prefix-table").locator("tbody tr");
  await expect(rows).toHaveCount(b.prefixes.length);
  for (const [i, p] of b.prefixes.entries()) {
    const cells = rows.nth(i).locator("td");
    expect(plain(await cells.nth(0).textContent())).toBe(p.other ? "(others)" : p.prefix);
    expect(plain(await cells.nth(1).textContent())).toContain(p.requests.toLocaleString("en-US"));
  }
  await expect(page.getByTestId("ttl-panel")).toContainText(`expiry saves ${Math.round(b.ttl!.saved_ratio! * 100)}`);
  await expect(page.getByTestId("hot-keys")).toContainText(b.hot_keys[0].key);
  await expect(page.getByTestId("left-table")).toContainText(`${b.left.evicted.toLocaleString("en-US")} evicted`);
  // a new target asks the API again
  await page.getByLabel("Hit rate target in percent").fill("80");
  await expect(page.getByTestId("prefix-table")).toContainText("Needs for 80");
  await page.screenshot({ path: "artifacts/breakdown.png", fullPage: true });
});

test.describe("phone", () => {
  test.use({ viewport: { width: 390, height: 844 } });
  test("breakdown at 390 px: tables scroll inside their cards, nothing overflows the page", async ({ page }) => {
    await open(page);
    await expect(page.getByTestId("ttl-panel")).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: "artifacts/phone-breakdown.png", fullPage: true });
  });
});
