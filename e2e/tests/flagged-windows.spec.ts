import { test } from "@playwright/test";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { api, e2eEnv, expect, fitsTheViewport, freePort, signUpConfirmed, waitPort } from "./helpers";

// A window the agent's self-check flagged is left out of the answers as a lossy one is, and the
// page says why, with the agent's figures. End to end: a real memcached, the real agent uploading
// to this backend with its lookup correction off (`--lookup-correction 0`: every item_get a read,
// the agent before it counted what memcached counts), so once clients send incrs its hit ratio
// parts from memcached's and its self-check disagrees; the worker's own task on the uploads
// (e2e/process_uploads.py); the curve page's note against the agent's own log.
// Screenshots at 1440 and 390 px go to SHOTS (HITCURVE_E2E_SHOTS, default artifacts/).

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SHOTS = process.env.HITCURVE_E2E_SHOTS ?? "artifacts";

test.describe("a flagged window says why it was left out", () => {
  const procs: ChildProcess[] = [];
  let dir = "";
  test.afterEach(() => {
    for (const p of procs.splice(0)) if (p.exitCode === null) p.kill("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("self-check disagreed: the curve page names it with the agent's figures", async ({ page, context, baseURL }) => {
    test.setTimeout(300_000);
    dir = mkdtempSync(path.join(tmpdir(), "hc-flagged-"));
    const mcPort = await freePort();
    const address = `127.0.0.1:${mcPort}`;
    const root = typeof process.getuid === "function" && process.getuid() === 0 ? ["-u", "root"] : [];
    // 8 MiB under 40,000 values of 500 B: full and evicting within seconds
    procs.push(spawn("memcached", ["-l", "127.0.0.1", "-p", String(mcPort), "-U", "0", "-m", "8", ...root], { stdio: "ignore" }));
    await waitPort(mcPort);

    await signUpConfirmed(page, `flagged-${Date.now()}@example.com`, "correct horse battery staple", "Self-check");
    const csrf = (await context.cookies()).find((c) => c.name === "hitcurve_csrf")!.value;
    const made = await page.request.post("/api/v1/agent-keys", { data: { name: "self-check" }, headers: { "X-CSRF-Token": csrf } });
    expect(made.status()).toBe(201);
    writeFileSync(path.join(dir, "agent.key"), ((await made.json()).key as string) + "\n", { mode: 0o600 });
    mkdirSync(path.join(dir, "spool"));
    const agent = spawn(
      path.join(ROOT, "bin/hitcurve-agent"),
      ["run", "--memcached", address, "--backend-url", baseURL!, "--agent-key-file", path.join(dir, "agent.key"),
        "--spool-dir", path.join(dir, "spool"), "--interval", "2", "--stats-interval", "1", "--lookup-correction", "0"],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let log = "";
    agent.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    procs.push(agent);
    // spawned, not execFileSync: the agent's log is read on this event loop meanwhile
    const loadgen = (seconds: number, extra: string[]) => {
      const p = spawn(path.join(ROOT, "bin/hc-loadgen"),
        ["--server", address, "--keys", "40000", "--requests", "0", "--duration", String(seconds), "--value-size", "500", "--quiet", ...extra],
        { stdio: "ignore" });
      procs.push(p);
      return new Promise((r) => p.once("exit", r));
    };

    // Reads only: the agent's hit ratio is memcached's, windows agree.
    await expect.poll(() => log, { timeout: 60_000 }).toContain("msg=watch_connected");
    await loadgen(30, []);
    const agreed = (log.match(/self_check=ok/g) ?? []).length;
    expect(agreed, log).toBeGreaterThanOrEqual(5);
    // Then 60 % incr of a counter per key: each incr's lookup prints like a read's; counted as one,
    // the agent's hit ratio parts from memcached's get_hits / (get_hits + get_misses).
    await loadgen(40, ["--incr-frac", "0.6"]);
    await expect.poll(() => (log.match(/self_check=disagrees/g) ?? []).length, { timeout: 30_000, message: log }).toBeGreaterThanOrEqual(3);
    agent.kill("SIGTERM");
    await new Promise((r) => agent.once("exit", r));
    // what the agent said of each window it flagged for its self-check: its figure and memcached's,
    // in percent (its log has 4 decimals, the snapshot 6: the note's 82.9 may be the log's 0.8295)
    const said = [...log.matchAll(/self_check_failed agent_hit_ratio=([\d.]+) measured_hit_ratio=([\d.]+)/g)]
      .map((m) => [100 * Number(m[1]), 100 * Number(m[2])]);

    type Row = { id: string; address: string };
    await expect.poll(async () => (await api<Row[]>(page, "/servers")).find((s) => s.address === address)?.id, { timeout: 60_000 }).toBeTruthy();
    const id = (await api<Row[]>(page, "/servers")).find((s) => s.address === address)!.id;
    const env = { ...process.env, ...e2eEnv(baseURL!) };
    type Curve = { merged: { windows_note: string | null } | null };
    await expect.poll(async () => {
      execFileSync(path.join(ROOT, ".venv/bin/python"), [path.join(ROOT, "e2e/process_uploads.py"), address], { env });
      return (await api<Curve>(page, `/servers/${id}/curve`)).merged?.windows_note ?? "";
    }, { timeout: 60_000, intervals: [2_000] }).toContain("self-check disagreed");

    // The answers leave them out, and say why with the figures the agent logged.
    const note = (await api<Curve>(page, `/servers/${id}/curve`)).merged!.windows_note!;
    const figures = /self-check disagreed: the agent read (\d+\.\d) % against memcached's (\d+\.\d) %, more than its (\d+\.\d) pp tolerance/.exec(note);
    expect(figures, note).not.toBeNull();
    const [agentPct, mcPct] = [Number(figures![1]), Number(figures![2])];
    expect(said.some(([a, m]) => Math.abs(a - agentPct) <= 0.06 && Math.abs(m - mcPct) <= 0.06), `${note}\n${JSON.stringify(said)}`).toBe(true);
    expect(Number(figures![3])).toBeGreaterThanOrEqual(1.0);
    const answer = await api<{ message: string }>(page, `/sizing/servers/${id}/memory?target_hit_ratio=0.5`);
    expect(answer.message).toContain(figures![0]);

    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`/servers/${id}`);
    const shown = page.getByTestId("windows-note");
    await expect(shown).toContainText(figures![0]);
    await page.screenshot({ path: `${SHOTS}/flagged-window-1440.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(shown).toBeVisible();
    await fitsTheViewport(page);
    await page.screenshot({ path: `${SHOTS}/flagged-window-390.png`, fullPage: true });
  });
});
