import { test, type Page } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, freePort, plain, signUpConfirmed } from "./helpers";

// Warm-up end to end: a real memcached (-m 16) filling under traffic from this test,
// the real agent (2 s windows) uploading to the real backend, a real Celery worker computing the
// curves, and the dashboard in Chromium. Until memcached is full the server and its cluster say
// "warming up" in the API and in the UI (card and curve page), no critical alert exists and no
// answer says "beyond the curve"; once memcached is full, the status is ok with a normal answer.
//
// The test drives memcached itself, so it decides when memcached fills: a hot set is read all the
// time (windows are never quiet) while a trickle of new keys fills memory slowly; only once the
// warming state has been seen in the API and in both views does a burst fill memcached. Every
// wait is for an event, with a generous deadline.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MiB = 2 ** 20;
const LIMIT_MB = 16;
const VALUE = "v".repeat(1000); // one slab class (1184-byte chunks)
const HOT_KEYS = 1500; // ~1.7 MiB read all the time
const SCREENS = process.env.HITCURVE_SCREENS_DIR ?? "artifacts";

async function until<T>(what: string, ms: number, f: () => Promise<T | null | undefined | false>): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown = null;
  while (Date.now() < end) {
    try {
      const v = await f();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}

/** The private test services' URLs: from the environment (scripts/test.sh) or .run/test/env. */
function testEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  try {
    for (const line of readFileSync(path.join(ROOT, ".run/test/env"), "utf8").split("\n")) {
      const i = line.indexOf("=");
      if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
    }
  } catch {
    /* the environment names them */
  }
  for (const k of ["HITCURVE_DATABASE_URL", "HITCURVE_REDIS_URL"]) if (process.env[k]) out[k] = process.env[k]!;
  return out;
}

/** A minimal memcached text-protocol client: multi-gets of batches, sets (noreply) for misses. */
class Driver {
  private sock: net.Socket;
  private buf = Buffer.alloc(0);
  private waiting: Array<(hits: Set<string>) => void> = [];
  private next = 0; // the next new ("cold") key
  reads = 0;
  hits = 0;

  constructor(port: number) {
    this.sock = net.connect(port, "127.0.0.1");
    this.sock.on("data", (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.parse();
    });
  }

  private parse() {
    for (;;) {
      const end = this.buf.indexOf("END\r\n");
      if (end < 0 || !this.waiting.length) return;
      // values are "v" x 1000: no "END\r\n" inside them
      const chunk = this.buf.subarray(0, end).toString("latin1");
      this.buf = this.buf.subarray(end + 5);
      const hits = new Set<string>();
      for (const m of chunk.matchAll(/VALUE (\S+) /g)) hits.add(m[1]);
      this.waiting.shift()!(hits);
    }
  }

  /** Read `keys` in one multi-get; store the ones that missed (look-aside). */
  async batch(keys: string[]): Promise<void> {
    const got = new Promise<Set<string>>((resolve) => this.waiting.push(resolve));
    this.sock.write(`get ${keys.join(" ")}\r\n`);
    const hits = await got;
    this.reads += keys.length;
    this.hits += hits.size;
    const sets = keys.filter((k) => !hits.has(k)).map((k) => `set ${k} 0 0 ${VALUE.length} noreply\r\n${VALUE}\r\n`);
    if (sets.length) this.sock.write(sets.join(""));
  }

  /** One tick: `hot` reads of the hot set and `cold` reads of keys never seen before. */
  async tick(hot: number, cold: number): Promise<void> {
    const keys: string[] = [];
    for (let i = 0; i < hot; i++) keys.push(`hot:${Math.floor(Math.random() ** 1.5 * HOT_KEYS)}`);
    for (let i = 0; i < cold; i++) keys.push(`cold:${this.next++}`);
    for (let i = 0; i < keys.length; i += 100) await this.batch(keys.slice(i, i + 100));
  }

  /** `stats` (or `stats slabs`, which holds total_malloced) on a connection of its own. */
  async stats(group = ""): Promise<Record<string, string>> {
    return new Promise((resolve, reject) => {
      const c = net.connect(this.sock.remotePort!, "127.0.0.1", () => c.write(`stats${group ? ` ${group}` : ""}\r\n`));
      let s = "";
      c.on("data", (d: Buffer) => {
        s += d.toString();
        if (s.endsWith("END\r\n")) {
          c.end();
          resolve(Object.fromEntries([...s.matchAll(/STAT (\S+) (\S+)/g)].map((m) => [m[1], m[2]])));
        }
      });
      c.once("error", reject);
    });
  }

  close() {
    this.sock.destroy();
  }
}

type Answer = {
  status: string;
  message: string;
  fill_ratio: number | null;
  full_in_seconds: number | null;
  used_bytes: number | null;
  current_memory_limit_bytes: number | null;
  memory_bytes: number | null;
  memory_limit_bytes: number | null;
  recommended_memory_limit_bytes: number | null;
  stable: boolean | null;
  curve: { measured_hit_ratio: number | null };
};

async function answer(page: Page, path: string): Promise<Answer | null> {
  const r = await page.request.get(`/api/v1${path}`);
  if (r.status() === 409) return null; // no curve yet
  expect(r.status(), `${path}: ${await r.text()}`).toBe(200);
  return (await r.json()) as Answer;
}

async function noCriticalAlert(page: Page, when: string) {
  const r = await page.request.get("/api/v1/alerts?state=open");
  expect(r.status()).toBe(200);
  const critical = ((await r.json()) as Array<{ severity: string; kind: string; message: string }>).filter((a) => a.severity === "critical");
  expect(critical, `critical alerts ${when}`).toEqual([]);
}

/** Reload until `f` passes (the views load once; the worker moves on between reloads). */
async function reloadUntil(page: Page, ms: number, f: () => Promise<void>) {
  await expect(async () => {
    await page.reload();
    await f();
  }).toPass({ timeout: ms, intervals: [1000, 2000, 3000] });
}

async function shoot(page: Page, name: string) {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: `${SCREENS}/${name}-desktop.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  expect(scroll, `${name} at 390 px scrolls sideways`).toBeLessThanOrEqual(inner);
  await page.screenshot({ path: `${SCREENS}/${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
}

test.describe("warm-up, live", () => {
  const procs: ChildProcess[] = [];
  let dir = "";
  let driver: Driver | null = null;
  let running = false;
  test.afterEach(async () => {
    running = false;
    driver?.close();
    for (const p of procs.splice(0)) if (p.exitCode === null) p.kill("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("memcached filling: warming up in the API, on the card and the curve page; once full, ok", async ({ page, context, baseURL }) => {
    test.setTimeout(420_000);
    dir = mkdtempSync(path.join(tmpdir(), "hc-warmup-"));
    const env = testEnv();
    const port = new URL(baseURL!).port;
    // The worker works on the browser checks' database (scripts/e2e-server.sh: one per port).
    const db = `${env.HITCURVE_DATABASE_URL.replace(/\/[^/]*$/, "")}/hitcurve_e2e_${port}`;
    const workerLog: string[] = [];
    const worker = spawn(
      path.join(ROOT, ".venv/bin/celery"),
      ["-A", "hitcurve_worker.celery_app", "worker", "--loglevel=INFO", "--concurrency=2", "--without-gossip", "--without-mingle",
        "-n", `e2e-warmup-${Date.now()}@%h`],
      { cwd: ROOT, env: { ...process.env, ...env, HITCURVE_DATABASE_URL: db }, stdio: ["ignore", "pipe", "pipe"] },
    );
    worker.stdout!.on("data", (d: Buffer) => workerLog.push(d.toString()));
    worker.stderr!.on("data", (d: Buffer) => workerLog.push(d.toString()));
    procs.push(worker);

    const mcPort = await freePort();
    const root = typeof process.getuid === "function" && process.getuid() === 0 ? ["-u", "root"] : [];
    procs.push(spawn("memcached", ["-l", "127.0.0.1", "-p", String(mcPort), "-U", "0", "-m", String(LIMIT_MB), "-t", "2", ...root], { stdio: "ignore" }));
    await until("memcached", 20_000, () => new Promise<boolean>((resolve) => {
      const c = net.connect(mcPort, "127.0.0.1", () => (c.end(), resolve(true)));
      c.once("error", () => resolve(false));
    }));
    const address = `127.0.0.1:${mcPort}`;

    // An organization of its own, a cluster with a target the hot set reaches, an agent key.
    await signUpConfirmed(page, `warmup-${Date.now()}@example.com`, "correct horse battery staple", "Warm-up");
    const csrf = (await context.cookies()).find((c) => c.name === "hitcurve_csrf")!.value;
    const headers = { "X-CSRF-Token": csrf };
    const cluster = await page.request.post("/api/v1/clusters", { data: { name: "sessions", target_hit_ratio: 0.5 }, headers });
    expect(cluster.status()).toBe(201);
    const clusterId = (await cluster.json()).id as string;
    const key = await page.request.post("/api/v1/agent-keys", { data: { name: "warmup" }, headers });
    expect(key.status()).toBe(201);
    writeFileSync(path.join(dir, "agent.key"), (await key.json()).key + "\n", { mode: 0o600 });
    mkdirSync(path.join(dir, "spool"));

    // Traffic from the start: 2 s windows must never be quiet (>= 1000 reads each).
    driver = new Driver(mcPort);
    let cold = 4; // new keys per 100 ms: ~47 KiB/s of 1184-byte chunks, a new 1 MiB page every ~22 s
    running = true;
    const traffic = (async () => {
      while (running) {
        const t = Date.now();
        await driver!.tick(150, cold);
        await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - t))));
      }
    })();
    const agentLog: string[] = [];
    const agent = spawn(
      path.join(ROOT, "bin/hitcurve-agent"),
      ["run", "--memcached", address, "--backend-url", baseURL!, "--agent-key-file", path.join(dir, "agent.key"),
        "--spool-dir", path.join(dir, "spool"), "--interval", "2", "--stats-interval", "1"],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    agent.stderr!.on("data", (d: Buffer) => agentLog.push(d.toString()));
    procs.push(agent);
    const logs = () => `agent log:\n${agentLog.join("").slice(-3000)}\nworker log:\n${workerLog.join("").slice(-3000)}`;

    const serverId = await until(`the server registered\n${logs()}`, 90_000, async () => {
      const r = await page.request.get("/api/v1/servers");
      return ((await r.json()) as Array<{ id: string; address: string }>).find((s) => s.address === address)?.id;
    });
    expect((await page.request.patch(`/api/v1/servers/${serverId}`, { data: { cluster_id: clusterId }, headers })).status()).toBe(200);

    // Filling: every answer, the server's and the cluster's, says warming_up; never "beyond".
    const filling = async () => {
      const malloced = Number((await driver!.stats("slabs")).total_malloced);
      expect(Number.isFinite(malloced)).toBe(true);
      return malloced + 2 * MiB <= LIMIT_MB * MiB; // the agent's "full" (stats.c, ag_memory_full)
    };
    const seen = await until(`a warming answer from the worker's curves\n${logs()}`, 150_000, async () => {
      const s = await answer(page, `/sizing/servers/${serverId}/memory?target_hit_ratio=0.5`);
      const c = await answer(page, `/sizing/clusters/${clusterId}/memory?target_hit_ratio=0.5`);
      return s && c && s.full_in_seconds !== null && c.full_in_seconds !== null ? { s, c } : null;
    });
    expect(await filling(), "memcached filled before the warming state was seen").toBe(true);
    for (const a of [seen.s, seen.c]) {
      expect(a.status).toBe("warming_up");
      expect(a.fill_ratio!).toBeGreaterThan(0);
      expect(a.fill_ratio!).toBeLessThan(1);
      expect(a.current_memory_limit_bytes).toBe(LIMIT_MB * MiB);
      expect(a.used_bytes!).toBeLessThan(LIMIT_MB * MiB);
      expect(a.message).toContain("still filling");
      expect(a.message).not.toContain("beyond");
      expect(a.stable, "a warming answer is never stable").not.toBe(true);
      // unknown until full: no number an autoscaler or a reader could act on
      expect(a.memory_bytes).toBeNull();
      expect(a.memory_limit_bytes).toBeNull();
    }
    await noCriticalAlert(page, "while memcached fills");

    // (the app writes a no-break space between a number and its unit: \s matches it)
    const fillText = /memcached\sstill\sfilling\s—\s[\d.]+\s(KiB|MiB)\sof\s16\sMiB,\sfull\sin\sabout\s\d+\s(s|min)/;
    await page.goto("/");
    await reloadUntil(page, 90_000, async () => {
      const card = page.locator(`[data-cluster="${clusterId}"]`);
      await expect(card.getByTestId("cluster-warming")).toContainText(fillText, { timeout: 3000 });
      await expect(card.locator(".badge")).toHaveText("Warming up");
      await expect(card).not.toContainText("beyond");
      await expect(card).not.toContainText("Critical");
    });
    await shoot(page, "warming-clusters");
    expect(await filling(), "memcached filled before the card was seen").toBe(true);

    await page.goto(`/servers/${serverId}`);
    await reloadUntil(page, 90_000, async () => {
      await expect(page.getByTestId("warming")).toContainText(fillText, { timeout: 5000 });
      await expect(page.getByTestId("target-answer")).toHaveAttribute("data-status", "warming_up");
    });
    await expect(page.getByTestId("curve-view")).not.toContainText("beyond");
    await shoot(page, "warming-curve");
    expect(await filling(), "memcached filled before the curve page was seen").toBe(true);
    await noCriticalAlert(page, "while memcached fills");

    // Fill memcached: a burst of new keys until it evicts, then the trickle again.
    cold = 400;
    await until("memcached full", 120_000, async () => Number((await driver!.stats()).evictions) > 0);
    cold = 4;

    const ok = await until(`status ok once full\n${logs()}`, 180_000, async () => {
      const a = await answer(page, `/sizing/servers/${serverId}/memory?target_hit_ratio=0.5`);
      return a?.status === "ok" ? a : null;
    });
    expect(ok.fill_ratio).toBe(1);
    expect(ok.full_in_seconds).toBeNull();
    expect(Number.isInteger(ok.memory_bytes) && Number.isInteger(ok.memory_limit_bytes)).toBe(true);
    expect(ok.memory_limit_bytes! % MiB).toBe(0);
    expect(ok.message).toContain(`set -m ${ok.recommended_memory_limit_bytes! / MiB}`);
    expect(ok.message).not.toContain("filling");
    const okCluster = await until("cluster ok once full", 120_000, async () => {
      const a = await answer(page, `/sizing/clusters/${clusterId}/memory?target_hit_ratio=0.5`);
      return a?.status === "ok" ? a : null;
    });
    expect(okCluster.fill_ratio).toBe(1);
    await noCriticalAlert(page, "once full");

    // Breakdowns that add up, live: the prefixes' memory held sums to at most what memcached
    // stores (the breakdown's stored_bytes is memcached's `bytes` at the window's end, the agent
    // splits it by its sampled keys' resident bytes, rounded down), that figure is memcached's own,
    // and every key here has a prefix (hot:, cold:), so no "(none)" row holds memory.
    // The newest breakdown can be a window from before the fill while the next one is processed
    // (CI at load 20: 6.0 MB stored against memcached's 15.1 MB): its figures are read once a
    // window from after the fill is there.
    type Breakdown = { prefixes: Array<{ prefix: string; bytes: number }>; stored_bytes: number | null };
    let b: Breakdown = { prefixes: [], stored_bytes: null };
    let storedNow = 0;
    await until("a breakdown window from after the fill", 120_000, async () => {
      const bd = await page.request.get(`/api/v1/servers/${serverId}/breakdown`);
      expect(bd.status(), await bd.text()).toBe(200);
      b = (await bd.json()) as Breakdown;
      storedNow = Number((await driver!.stats()).bytes);
      return b.stored_bytes !== null && Math.abs(b.stored_bytes - storedNow) <= 0.1 * storedNow;
    }).catch(() => undefined); // the checks below say what was read last
    expect(b.stored_bytes, "the breakdown names memcached's stored bytes").not.toBeNull();
    expect(b.stored_bytes!).toBeGreaterThan(0);
    expect(b.stored_bytes!).toBeLessThanOrEqual(LIMIT_MB * MiB);
    // full memcached stores about the same bytes window after window (the trickle replaces evicted items)
    expect(Math.abs(b.stored_bytes! - storedNow), `stored ${b.stored_bytes} vs memcached's bytes now ${storedNow}`).toBeLessThanOrEqual(0.1 * storedNow);
    const held = b.prefixes.reduce((sum, p) => sum + p.bytes, 0);
    expect(held, JSON.stringify(b.prefixes.map((p) => [p.prefix, p.bytes]))).toBeLessThanOrEqual(b.stored_bytes!);
    expect(b.prefixes.filter((p) => p.prefix === "(none)" && p.bytes > 0), "memory held by keys without a prefix").toEqual([]);

    await reloadUntil(page, 60_000, async () => {
      await expect(page.getByTestId("target-answer")).toHaveAttribute("data-status", "ok", { timeout: 5000 });
    });
    await expect(page.getByTestId("warming")).toHaveCount(0);
    const sentence = plain(await page.getByTestId("target-answer").textContent());
    expect(sentence).toMatch(/^50(\.0)? % hit rate needs [\d.]+ (KiB|MiB) \(-m \d+\)/); // plain(): ordinary spaces
    await shoot(page, "full-curve");

    // A target past what the agent has seen: unknown until it has seen further (just full, its ghost
    // holds only the keys evicted since), or once seen whole a bound or "no memory size reaches".
    await page.getByTestId("target-input").fill("99.9");
    await expect(page.getByTestId("target-answer")).toHaveAttribute("data-status", /unknown|above_curve|unreachable/);
    const far = plain(await page.getByTestId("target-answer").textContent());
    expect(far).toMatch(/unknown until the agent has seen further|needs more than [\d.]+ (KiB|MiB)|No memory size reaches/);
    expect(far).not.toContain("beyond");
    await shoot(page, "above-curve");

    await page.goto("/");
    await reloadUntil(page, 60_000, async () => {
      const card = page.locator(`[data-cluster="${clusterId}"]`);
      await expect(card.getByTestId("cluster-warming")).toHaveCount(0, { timeout: 3000 });
      await expect(card.locator(".badge")).not.toHaveText("Warming up");
    });
    await shoot(page, "full-clusters");

    running = false;
    await traffic;
  });
});
