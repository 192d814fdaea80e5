// Screenshots of the clusters page and every server page at 1440 and 390 px, logged in as the
// demo owner, for the first-minutes timeline (bench/live/first_minutes.py):
//   node bench/live/shots.mjs API_URL OUT_DIR LABEL
// Run from the repository root; Chromium comes from e2e/node_modules (make build installs it).
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(path.resolve("e2e/package.json"));
const { chromium } = require("@playwright/test");
const [api, out, label] = process.argv.slice(2);
const EMAIL = "demo@hitcurve.dev";
const PASSWORD = "hitcurve-demo-password";

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium" });
try {
  for (const width of [1440, 390]) {
    const page = await browser.newPage({ viewport: { width, height: width > 500 ? 900 : 844 }, baseURL: api });
    await page.goto("/login");
    await page.getByLabel("E-mail").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("heading", { name: "Clusters" }).waitFor();
    // the cards, not the loading state (answers take seconds on a loaded machine)
    await page.getByTestId("clusters").waitFor({ timeout: 60000 }).catch(() => {});
    await page.waitForTimeout(1500);
    await page.screenshot({ path: `${out}/${label}-clusters-${width}.png`, fullPage: true });
    // the page's text beside each picture, to read every -m the page names
    fs.writeFileSync(`${out}/${label}-clusters-${width}.txt`, await page.locator("body").innerText());
    const servers = await (await page.request.get("/api/v1/servers")).json();
    for (const s of servers) {
      await page.goto(`/servers/${s.id}`);
      await page.getByTestId("target-answer").waitFor({ timeout: 30000 }).catch(() => {});
      await page.waitForTimeout(1500);
      const name = s.address.replace(/[^0-9]+/g, "-");
      await page.screenshot({ path: `${out}/${label}-server-${name}-${width}.png`, fullPage: true });
      fs.writeFileSync(`${out}/${label}-server-${name}-${width}.txt`, await page.locator("body").innerText());
      const [sw, iw] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      if (sw > iw) console.log(`${label} ${s.address} at ${width} px scrolls sideways (${sw} > ${iw})`);
    }
    await page.close();
  }
} finally {
  await browser.close();
}
