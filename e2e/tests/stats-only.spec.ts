import { test } from "@playwright/test";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { api, e2eEnv, expect, fitsTheViewport, freePort, signUpConfirmed, waitPort } from "./helpers";

// Stats-only sizing end to end: a real memcached that refuses `watch` (-W, as ElastiCache Serverless
// does), the real agent (it falls back to its stats-only mode) uploading to this backend, the
// worker's own task on its uploads (the e2e backend runs no worker: e2e/process_uploads.py runs
// it in process, as seed.py does), and the page and the sizing API saying what the curve rests on.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

type Answer = { data_basis: string; basis: string; message: string; status: string; band: { hit_rate_min: number | null; hit_rate_max: number | null } };

test.describe("stats-only mode end to end", () => {
  const procs: ChildProcess[] = [];
  let dir = "";
  test.afterEach(() => {
    for (const p of procs.splice(0)) if (p.exitCode === null) p.kill("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("memcached refusing watch: the agent's stats-only curve is labelled on the page and in the API", async ({ page, context, baseURL }) => {
    test.setTimeout(300_000);
    dir = mkdtempSync(path.join(tmpdir(), "hc-stats-only-"));
    const mcPort = await freePort();
    const address = `127.0.0.1:${mcPort}`;
    const root = typeof process.getuid === "function" && process.getuid() === 0 ? ["-u", "root"] : [];
    // 8 MiB: the load below makes it evict, which the agent's model needs to fit a curve.
    procs.push(spawn("memcached", ["-W", "-l", "127.0.0.1", "-p", String(mcPort), "-U", "0", "-m", "8", ...root], { stdio: "ignore" }));
    await waitPort(mcPort);

    // An organization of its own, so this server changes no other check's data.
    await signUpConfirmed(page, `stats-only-${Date.now()}@example.com`, "correct horse battery staple", "Serverless");
    const csrf = (await context.cookies()).find((c) => c.name === "hitcurve_csrf")!.value;
    const made = await page.request.post("/api/v1/agent-keys", { data: { name: "serverless" }, headers: { "X-CSRF-Token": csrf } });
    expect(made.status()).toBe(201);
    const secret = (await made.json()).key as string;
    writeFileSync(path.join(dir, "agent.key"), secret + "\n", { mode: 0o600 });
    mkdirSync(path.join(dir, "spool"));

    const agent = spawn(
      path.join(ROOT, "bin/hitcurve-agent"),
      ["run", "--memcached", address, "--backend-url", baseURL!, "--agent-key-file", path.join(dir, "agent.key"),
        "--spool-dir", path.join(dir, "spool"), "--interval", "2", "--stats-interval", "1"],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let log = "";
    agent.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    procs.push(agent);
    const load = spawn(path.join(ROOT, "bin/hc-loadgen"),
      ["--server", address, "--keys", "40000", "--requests", "0", "--duration", "90", "--value-size", "500", "--quiet"], { stdio: "ignore" });
    procs.push(load);

    // The agent says once that watch is refused, and fits its model once memcached evicts.
    await expect.poll(() => log, { timeout: 60_000, message: "watch refused" }).toContain("msg=watch_refused");
    await expect.poll(() => (log.match(/msg=stats_only_window [^\n]*model=fitted/g) ?? []).length,
      { timeout: 120_000, message: `fitted stats-only windows; agent log:\n${log}` }).toBeGreaterThanOrEqual(3);
    // ... and the uploads arrived: the server is listed, resting on stats only.
    type Row = { id: string; address: string; data_basis: string | null };
    await expect.poll(async () => (await api<Row[]>(page, "/servers")).find((s) => s.address === address)?.data_basis,
      { timeout: 60_000 }).toBe("stats_only");
    const id = (await api<Row[]>(page, "/servers")).find((s) => s.address === address)!.id;
    expect(log).not.toContain("window_blind");
    expect(log.match(/msg=watch_refused/g)!.length).toBe(1);

    // The worker's task on what arrived (until a curve exists: the first windows may not be fitted yet).
    const env = { ...process.env, ...e2eEnv(baseURL!) };
    await expect.poll(async () => {
      execFileSync(path.join(ROOT, ".venv/bin/python"), [path.join(ROOT, "e2e/process_uploads.py"), address], { env });
      return (await page.request.get(`/api/v1/sizing/servers/${id}/memory?target_hit_ratio=0.5`)).status();
    }, { timeout: 60_000, intervals: [2_000] }).toBe(200);

    const a = await api<Answer>(page, `/sizing/servers/${id}/memory?target_hit_ratio=0.5`);
    expect(a.data_basis).toBe("stats_only");
    expect(a.message).toMatch(/^estimated from stats only — memcached refused `watch`/);
    const curve = await api<{ classes: unknown[]; merged: { data_basis: string }; latest_snapshot: { data_basis: string } }>(page, `/servers/${id}/curve`);
    expect(curve.classes).toEqual([]);
    expect(curve.merged.data_basis).toBe("stats_only");

    // The servers list marks the server; its curve page says what the curve is and why.
    await page.goto("/servers");
    const row = page.locator(`tr[data-server="${id}"]`);
    await expect(row.getByTestId("stats-only-badge")).toHaveText("stats only");
    await page.screenshot({ path: "artifacts/stats-only-servers-desktop.png", fullPage: true });
    await page.goto(`/servers/${id}`);
    const label = page.getByTestId("stats-only-label");
    await expect(label).toContainText("Estimated from stats only");
    await expect(label).toContainText("refused watch");
    await expect(page.getByTestId("legend-curve")).toHaveText("curve estimated from stats only (model)");
    await expect(page.getByTestId("answer-basis")).toHaveAttribute("data-basis", "stats_only");
    await expect(page.getByTestId("answer-basis")).toContainText("estimated from stats only (model)");
    await page.screenshot({ path: "artifacts/stats-only-curve-desktop.png", fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(label).toBeVisible();
    await fitsTheViewport(page);
    await page.screenshot({ path: "artifacts/stats-only-curve-390.png", fullPage: true });
    await page.goto("/servers");
    await expect(page.locator(`tr[data-server="${id}"]`).getByTestId("stats-only-badge")).toBeVisible();
    await page.screenshot({ path: "artifacts/stats-only-servers-390.png", fullPage: true });
  });
});
