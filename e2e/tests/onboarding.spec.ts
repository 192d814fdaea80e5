import { test } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { api, expect, fitsTheViewport, freePort, logIn, plain, signUpConfirmed, waitPort } from "./helpers";

// Onboarding as a new operator does it: the copy-paste block of the Agents page, run for real.
// A real memcached and the real agent (bin/hitcurve-agent, built by `make build`) are started
// here with the configuration the page shows; the page must go from "waiting for the first
// upload" to "reporting" and let the server be put into a cluster.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");


test.describe("agents page onboarding", () => {
  const procs: ChildProcess[] = [];
  let dir = "";
  test.afterEach(() => {
    for (const p of procs.splice(0)) if (p.exitCode === null) p.kill("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("copy the install block, run it: waiting for the first upload, then reporting and assigned", async ({ page, context, baseURL }) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseURL });
    dir = mkdtempSync(path.join(tmpdir(), "hc-onboarding-"));
    const mcPort = await freePort();
    const address = `127.0.0.1:${mcPort}`;
    const root = typeof process.getuid === "function" && process.getuid() === 0 ? ["-u", "root"] : [];
    procs.push(spawn("memcached", ["-l", "127.0.0.1", "-p", String(mcPort), "-U", "0", "-m", "16", ...root], { stdio: "ignore" }));
    await waitPort(mcPort);

    // An organization of its own, so the server this test registers changes no other check's data.
    const email = `onboard-${Date.now()}@example.com`;
    await signUpConfirmed(page, email, "correct horse battery staple", "Onboarding");
    const csrf = (await context.cookies()).find((c) => c.name === "hitcurve_csrf")!.value;
    const made = await page.request.post("/api/v1/clusters", { data: { name: "sessions", target_hit_ratio: 0.8 }, headers: { "X-CSRF-Token": csrf } });
    expect(made.status()).toBe(201);
    await page.goto("/agents");
    await page.getByTestId("memcached-address").fill("not an address");
    await expect(page.getByRole("alert")).toContainText("not host:port");
    await page.getByTestId("memcached-address").fill(address);
    const name = `onboard-${Date.now()}`;
    await page.getByPlaceholder("cache-07").fill(name);
    await page.getByTestId("create-agent").click();
    const secret = plain(await page.getByTestId("new-secret").textContent());
    expect(secret).toMatch(/^hca_/);

    const block = page.getByTestId("install-block");
    await expect(block).toContainText(`printf '%s\\n' '${secret}'`);
    await expect(block).toContainText(`memcached = ${address}`);
    await expect(block).toContainText(`backend-url = ${baseURL}`);
    await expect(page.getByTestId("onboarding")).toContainText(`Waiting for the first upload from ${address}`);

    // An API token made meanwhile does not put the placeholder back into the install block.
    await page.getByPlaceholder("autoscaler").fill(`tok-${Date.now()}`);
    await page.getByTestId("create-api").click();
    await expect(page.getByTestId("new-secret")).toContainText("hct_");
    await expect(block).toContainText(`printf '%s\\n' '${secret}'`);
    // The sizing request names a real cluster of the organization.
    await expect(page.getByTestId("sizing-curl")).toContainText(`/sizing/clusters/${(await made.json()).id}/memory`);

    await page.locator(".copy-block", { has: block }).getByRole("button", { name: "Copy" }).click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(plain(copied)).toBe(plain(await block.textContent()));
    await page.screenshot({ path: "artifacts/onboarding-waiting.png", fullPage: true });

    // Run what was copied: the configuration between the heredoc markers, the key as printed.
    // Only the root-owned paths of the package are pointed into a temporary directory.
    const conf = /<<'EOF'\n([\s\S]*?)\nEOF/.exec(copied)![1];
    const key = /printf '%s\\n' '([^']+)'/.exec(copied)![1];
    writeFileSync(path.join(dir, "agent.conf"), conf + "\n");
    writeFileSync(path.join(dir, "agent.key"), key + "\n", { mode: 0o600 });
    mkdirSync(path.join(dir, "spool"));
    const agent = spawn(
      path.join(ROOT, "bin/hitcurve-agent"),
      ["run", "--config", path.join(dir, "agent.conf"), "--agent-key-file", path.join(dir, "agent.key"),
        "--spool-dir", path.join(dir, "spool"), "--interval", "2"],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let log = "";
    agent.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    procs.push(agent);

    const status = page.getByTestId("onboarding");
    await expect(status, { message: `agent log:\n${log}` }).toContainText(`${address} is reporting`, { timeout: 90_000 });
    await expect(status).toContainText("assign it to a cluster");
    await page.screenshot({ path: "artifacts/onboarding-reporting.png", fullPage: true });
    await status.getByLabel("Cluster").selectOption({ label: "sessions" });
    await status.getByRole("button", { name: "Assign" }).click();
    await expect(status).toContainText("in cluster sessions");
    const servers = await api<Array<{ address: string; cluster_id: string | null }>>(page, "/servers");
    expect(servers.find((s) => s.address === address)?.cluster_id).toBe((await made.json()).id);
  });

  test("at 390 px the agents page does not scroll sideways", async ({ page }) => {
    await logIn(page);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto("/agents");
    await expect(page.getByTestId("install-block")).toBeVisible();
    await expect(page.getByTestId("agent-keys-table").or(page.getByText("None yet.").first())).toBeVisible();
    await fitsTheViewport(page);
    // each kind of host gets its own block, fetched from this Hitcurve and checked by its SHA-256
    for (const [variant, says] of [["foreground", "tar -xzf"], ["no-systemd", "start-stop-daemon --start"], ["container", "docker build"]]) {
      await page.getByTestId("install-variant").selectOption(variant);
      await expect(page.getByTestId("install-block")).toContainText(says);
      await expect(page.getByTestId("install-block")).toContainText("sha256sum -c --ignore-missing SHA256SUMS");
      await fitsTheViewport(page);
    }
    await expect(page.getByTestId("agent-release")).toContainText("SHA256SUMS");
    await page.screenshot({ path: "artifacts/agents-390.png", fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await fitsTheViewport(page);
    await page.screenshot({ path: "artifacts/agents-desktop.png", fullPage: true });
  });
});

test("the API reference renders without internet access", async ({ page, baseURL }) => {
  // Each page waits for its own event (the rendered title, the operations), with a generous deadline:
  // ReDoc turns the 200 kB schema into ~15,000 DOM nodes in the page's one thread, measured 2.8-13 s
  // to its h1 at load 13-24 on 2 cores (openapi.json itself 0.6-2 s), so under another make test
  // (load 15-70) it passed the 40 s this test allowed. Nothing here depends on how fast that is.
  test.setTimeout(420_000);
  const host = new URL(baseURL!).host;
  const outside: string[] = [];
  await page.route("**/*", (route) => {
    if (new URL(route.request().url()).host === host) return route.continue();
    outside.push(route.request().url());
    return route.abort();
  });
  await page.goto("/docs"); // redirects to /api/v1/docs
  await expect(page).toHaveURL(/\/api\/v1\/docs$/);
  await expect(page.locator(".swagger-ui .info .title")).toContainText("Hitcurve API", { timeout: 120_000 });
  await expect(page.locator(".opblock").first()).toBeVisible({ timeout: 120_000 });
  expect(await page.locator(".opblock").count()).toBeGreaterThan(20);
  await page.screenshot({ path: "artifacts/api-docs.png" });
  expect(outside).toEqual([]);
  await page.goto("/api/v1/redoc");
  await expect(page.locator("h1").first()).toContainText("Hitcurve API", { timeout: 150_000 });
  await expect(page.getByText("Upload one snapshot").first()).toBeAttached({ timeout: 60_000 });
  await page.screenshot({ path: "artifacts/api-redoc.png" });
  // ReDoc's bundle links its "API docs by Redocly" footer logo to its CDN: a missing image only.
  expect(outside.filter((u) => u !== "https://cdn.redoc.ly/redoc/logo-mini.svg")).toEqual([]);
});
