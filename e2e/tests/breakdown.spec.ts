import { test } from "@playwright/test";
import { api, expect, logIn, plain, serverId } from "./helpers";

type Breakdown = {
  prefixes: Array<{ prefix: string; other: boolean; requests: number; memory_for_target: number | null }>;
  hot_keys: Array<{ key: string }>;
  ttl: { saved_ratio: number | null } | null;
  left: { expired: number; evicted: number; evicted_by_page_moves: number };
  classes: Array<{ id: number; evicted_by_page_moves: number }>;
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
  // page-move evictions are told apart in words and per class, as the API counts them
  expect(b.left.evicted_by_page_moves).toBeGreaterThan(0);
  await expect(page.getByTestId("left-table")).toContainText(
    `(${b.left.evicted_by_page_moves.toLocaleString("en-US")} of them by slab page moves)`,
  );
  const moved = b.classes.find((c) => c.evicted_by_page_moves > 0)!;
  const row = page.getByTestId("left-table").locator("tbody tr").filter({ has: page.locator(`td:first-child:text-is("${moved.id}")`) });
  await expect(row.locator("td").nth(4)).toHaveText(moved.evicted_by_page_moves.toLocaleString("en-US"));
  // a new target asks the API again
  await page.getByLabel("Hit rate target in percent").fill("80");
  await expect(page.getByTestId("prefix-table")).toContainText("Alone, for 80");
  // memory held adds up to what memcached stores, and the own-pool sum is named as what it is
  const held = await api<{ prefixes: Array<{ bytes: number }>; stored_bytes: number }>(page, `/servers/${id}/breakdown?target=0.8`);
  expect(held.prefixes.reduce((s, p) => s + p.bytes, 0)).toBeLessThanOrEqual(held.stored_bytes);
  await expect(page.getByTestId("prefix-total")).toContainText("stored");
  await expect(page.getByTestId("prefix-total")).toContainText("in separate pools");
  await expect(page.getByTestId("memory-answers")).toContainText("curve page");
  await page.screenshot({ path: "artifacts/breakdown.png", fullPage: true });
});

type Split = { prefix: string; gain_pp: number; best: { prefix_bytes: number }; check: { passed: boolean | null } };

test("pool split: choose a prefix, the best split and its gain are the API's, a chosen split is asked for", async ({ page }) => {
  const id = await open(page);
  const panel = page.getByTestId("pool-split");
  await expect(panel.getByTestId("split-best")).toBeVisible();
  await panel.getByLabel("Prefix to give its own pool").selectOption("feed");
  const s = await api<Split>(page, `/servers/${id}/breakdown/split?prefix=feed`);
  expect(s.check.passed).not.toBeNull();
  const gain = `${s.gain_pp >= 0 ? "+" : ""}${s.gain_pp.toFixed(1)} pp against one pool`;
  await expect(panel.getByTestId("split-best")).toContainText(gain);
  await expect(panel.getByTestId("split-best")).toContainText("feed alone in");
  await panel.getByLabel("Share of the memory for the prefix's pool, percent").fill("30");
  await expect(panel.getByTestId("split-chosen")).toContainText("feed alone in");
  await panel.screenshot({ path: "artifacts/breakdown-split.png" });
});

type TtlWhatIf = { prefix_hit_ratio: number; server_hit_ratio: number; memory_for_today_hit_ratio: number | null; reachable: boolean };

test("TTL what-if: choose a prefix and a TTL, the hit rates and the memory are the API's", async ({ page }) => {
  const id = await open(page);
  const panel = page.getByTestId("ttl-whatif");
  await expect(panel.getByTestId("ttl-hit")).toBeVisible();
  await panel.getByLabel("Prefix whose TTL to change").selectOption("sess");
  await panel.getByLabel("New TTL, seconds").fill("6");
  const a = await api<TtlWhatIf>(page, `/servers/${id}/breakdown/ttl?prefix=sess&ttl_s=6`);
  const pct = (x: number) => `${(100 * x).toFixed(1)}`;
  await expect(panel.getByTestId("ttl-hit")).toContainText("With a TTL of 6 s, sess would hit");
  await expect(panel.getByTestId("ttl-hit")).toContainText(pct(a.prefix_hit_ratio));
  await expect(panel.getByTestId("ttl-hit")).toContainText(pct(a.server_hit_ratio));
  expect(a.reachable).toBe(true);
  await expect(panel.getByTestId("ttl-memory")).toContainText("it would need");
  // a TTL outside whole seconds is refused before it is sent
  await panel.getByLabel("New TTL, seconds").fill("1.5");
  await expect(panel.getByTestId("ttl-invalid")).toBeVisible();
  await panel.getByLabel("New TTL, seconds").fill("6");
  await expect(panel.getByTestId("ttl-hit")).toBeVisible();
  await panel.screenshot({ path: "artifacts/breakdown-ttl-whatif.png" });
});

test("a server whose traffic carries TTLs is answered on the TTL-aware curve, and the answer says so", async ({ page }) => {
  // 10.0.0.9's newest window carries the breakdown, whose TTL-aware and oblivious curves differ by far
  // more than hitcurve/rules/ttl.py's 1 pp; 10.0.0.8's has no TTL-aware curve
  for (const [address, aware] of [
    ["10.0.0.9:11211", true],
    ["10.0.0.8:11211", false],
  ] as const) {
    const id = await serverId(page, address);
    const answer = await api<{ status: string; ttl_aware: boolean; message: string }>(
      page,
      `/sizing/servers/${id}/memory?target_hit_ratio=0.5`,
    );
    expect(answer.ttl_aware).toBe(aware);
    if (answer.status === "ok") expect(answer.message.includes("TTL-aware")).toBe(aware);
    await page.goto(`/servers/${id}`);
    const basis = page.getByTestId("answer-basis");
    await expect(basis).toHaveAttribute("data-ttl-aware", String(aware));
    if (aware) {
      await expect(basis).toContainText("TTL-aware (expired items are not capacity misses)");
      await page.screenshot({ path: "artifacts/answer-ttl-aware.png", fullPage: true });
    } else {
      await expect(basis).not.toContainText("TTL-aware");
    }
  }
});

test.describe("phone", () => {
  test.use({ viewport: { width: 390, height: 844 } });
  test("breakdown at 390 px: tables scroll inside their cards, nothing overflows the page", async ({ page }) => {
    await open(page);
    await expect(page.getByTestId("ttl-panel")).toBeVisible();
    await expect(page.getByTestId("split-best")).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: "artifacts/phone-breakdown.png", fullPage: true });
    await page.getByTestId("pool-split").screenshot({ path: "artifacts/phone-breakdown-split.png" });
    await expect(page.getByTestId("ttl-hit")).toBeVisible();
    await page.getByTestId("ttl-whatif").screenshot({ path: "artifacts/phone-breakdown-ttl-whatif.png" });
  });
  test("the TTL-aware answer at 390 px", async ({ page }) => {
    const id = await serverId(page, "10.0.0.9:11211");
    await page.goto(`/servers/${id}`);
    await expect(page.getByTestId("answer-basis")).toHaveAttribute("data-ttl-aware", "true");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: "artifacts/phone-answer-ttl-aware.png", fullPage: true });
  });
});

test("one prefix: the pool-split panel says quietly that there is nothing to split", async ({ page }) => {
  const id = await serverId(page, "10.0.0.8:11211");
  await page.goto(`/servers/${id}/breakdown`);
  const panel = page.getByTestId("pool-split");
  await expect(panel.getByTestId("split-nothing")).toContainText("Nothing to split in this window");
  await expect(panel.getByRole("alert")).toHaveCount(0);
  await expect(page.getByText("Something went wrong")).toHaveCount(0);
  await panel.screenshot({ path: "artifacts/breakdown-one-prefix.png" });
});

for (const [name, width] of [["desktop", 1440], ["phone", 390]] as const) {
  test(`breakdown and policies at ${width} px`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    const id = await open(page);
    await expect(page.getByTestId("prefix-total")).toBeVisible();
    await page.screenshot({ path: `artifacts/breakdown-${name}.png`, fullPage: true });
    const one = await serverId(page, "10.0.0.8:11211");
    await page.goto(`/servers/${one}/breakdown`);
    await expect(page.getByTestId("split-nothing")).toBeVisible();
    await page.screenshot({ path: `artifacts/breakdown-one-prefix-${name}.png`, fullPage: true });
    const big = await serverId(page, "10.0.0.7:11211");
    await page.goto(`/servers/${big}/policies`);
    await expect(page.getByTestId("policy-table")).toBeVisible();
    await page.screenshot({ path: `artifacts/policies-${name}.png`, fullPage: true });
    expect(id).toBeTruthy();
  });
}
