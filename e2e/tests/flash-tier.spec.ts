import { test } from "@playwright/test";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { api, e2eEnv, expect, fitsTheViewport, freePort, signUpConfirmed, waitPort } from "./helpers";

// A server with a flash tier (memcached's extstore), end to end: a real memcached -m 32 with
// 256 MiB of flash, the real agent uploading to this backend, the worker's own task on the uploads
// (e2e/process_uploads.py); the server page shows the tier with the API's note (the curve is for
// RAM with this flash tier as it is). Screenshots at 1440 and 390 px go to SHOTS.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SHOTS = process.env.HITCURVE_E2E_SHOTS ?? "artifacts";

test.describe("a server with a flash tier", () => {
  const procs: ChildProcess[] = [];
  let dir = "";
  test.afterEach(() => {
    for (const p of procs.splice(0)) if (p.exitCode === null) p.kill("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the server page says it has one, how full, the flash hit share and what the curve means", async ({ page, context, baseURL }) => {
    test.setTimeout(300_000);
    dir = mkdtempSync(path.join(tmpdir(), "hc-flash-"));
    const mcPort = await freePort();
    const address = `127.0.0.1:${mcPort}`;
    const root = typeof process.getuid === "function" && process.getuid() === 0 ? ["-u", "root"] : [];
    const ext = `ext_path=${path.join(dir, "flash.dat")}:256m,ext_item_age=2`;
    procs.push(spawn("memcached", ["-l", "127.0.0.1", "-p", String(mcPort), "-U", "0", "-m", "32", "-o", ext, ...root], { stdio: "ignore" }));
    await waitPort(mcPort);

    await signUpConfirmed(page, `flash-${Date.now()}@example.com`, "correct horse battery staple", "Flash");
    const csrf = (await context.cookies()).find((c) => c.name === "hitcurve_csrf")!.value;
    const made = await page.request.post("/api/v1/agent-keys", { data: { name: "flash" }, headers: { "X-CSRF-Token": csrf } });
    expect(made.status()).toBe(201);
    writeFileSync(path.join(dir, "agent.key"), ((await made.json()).key as string) + "\n", { mode: 0o600 });
    mkdirSync(path.join(dir, "spool"));
    const agent = spawn(
      path.join(ROOT, "bin/hitcurve-agent"),
      ["run", "--memcached", address, "--backend-url", baseURL!, "--agent-key-file", path.join(dir, "agent.key"),
        "--spool-dir", path.join(dir, "spool"), "--interval", "3", "--stats-interval", "1"],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let log = "";
    agent.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    procs.push(agent);
    await expect.poll(() => log, { timeout: 60_000 }).toContain("msg=watch_connected");
    const load = spawn(path.join(ROOT, "bin/hc-loadgen"),
      ["--server", address, "--dist", "zipf", "--alpha", "0.9", "--keys", "200000", "--min-value", "100", "--value-size", "1500",
        "--requests", "0", "--duration", "15", "--quiet"], { stdio: "ignore" });
    procs.push(load);
    await new Promise((r) => load.once("exit", r));
    await expect.poll(() => (log.match(/msg=window /g) ?? []).length, { timeout: 60_000 }).toBeGreaterThanOrEqual(5);
    agent.kill("SIGTERM");
    await new Promise((r) => agent.once("exit", r));

    type Row = { id: string; address: string };
    await expect.poll(async () => (await api<Row[]>(page, "/servers")).find((s) => s.address === address)?.id, { timeout: 60_000 }).toBeTruthy();
    const id = (await api<Row[]>(page, "/servers")).find((s) => s.address === address)!.id;
    const env = { ...process.env, ...e2eEnv(baseURL!) };
    execFileSync(path.join(ROOT, ".venv/bin/python"), [path.join(ROOT, "e2e/process_uploads.py"), address], { env });
    type Curve = { flash_tier: { note: string; limit_bytes: number } | null };
    const tier = (await api<Curve>(page, `/servers/${id}/curve`)).flash_tier;
    expect(tier).not.toBeNull();
    expect(tier!.limit_bytes).toBe(256 << 20);
    expect(tier!.note).toContain("for RAM (-m) with this flash tier as it is");

    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`/servers/${id}`);
    const shown = page.getByTestId("flash-tier");
    await expect(page.getByTestId("flash-note")).toHaveText(tier!.note);
    await expect(shown).toContainText("256\u00a0MiB");
    await expect(shown).toContainText("Hits from flash");
    await page.screenshot({ path: `${SHOTS}/flash-tier-1440.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(shown).toBeVisible();
    await fitsTheViewport(page);
    await page.screenshot({ path: `${SHOTS}/flash-tier-390.png`, fullPage: true });
  });
});
