import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect as baseExpect, type Page } from "@playwright/test";
import net from "node:net";

// The machine is shared with other engineers' builds and benchmarks: give the real backend
// (argon2id log-ins, real PostgreSQL) time, rather than fail on load: an assertion waits for its
// event, and a page renders slowly while another make test runs.
export const expect = baseExpect.configure({ timeout: 60_000 });

// The account e2e/seed.py creates.
export const EMAIL = "e2e@example.com";
export const PASSWORD = "correct horse battery staple";
export const GiB = 2 ** 30;

export async function logIn(page: Page) {
  await page.goto("/login");
  await page.getByLabel("E-mail").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page.getByRole("heading", { name: "Clusters" })).toBeVisible();
}

/** The API through the page's own cookies (same session as the browser). */
export async function api<T = unknown>(page: Page, path: string): Promise<T> {
  const r = await page.request.get(`/api/v1${path}`);
  expect(r.status(), `GET ${path}`).toBe(200);
  return (await r.json()) as T;
}

export async function serverId(page: Page, address: string): Promise<string> {
  const servers = await api<Array<{ id: string; address: string }>>(page, "/servers");
  return servers.find((s) => s.address === address)!.id;
}

/**
 * Memory in binary units, written here independently of the app's formatter: one decimal below
 * 100 of a unit (".0" dropped from 10 up), whole numbers from 100 up.
 */
export function expectedBytesText(bytes: number): string {
  const units: Array<[string, number]> = [["TiB", 2 ** 40], ["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]];
  for (const [name, size] of units) {
    if (bytes >= size) {
      const v = bytes / size;
      const r = Math.round(v * 10) / 10;
      // whole numbers from 10 up drop their ".0" ("54 MiB", as the app writes -m limits)
      return `${v >= 100 ? Math.round(v) : r >= 10 && Number.isInteger(r) ? String(r) : r.toFixed(1)} ${name}`;
    }
  }
  return `${Math.round(bytes)} B`;
}

/** Text as a reader would compare it: ordinary spaces and hyphen-minus. */
export const plain = (s: string | null) => (s ?? "").replace(/\u00a0/g, " ").replace(/\u2212/g, "-").trim();

/** A free loopback TCP port (for a memcached a test starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Wait until something listens on the port. */
export async function waitPort(port: number, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, "127.0.0.1", () => (c.end(), resolve(true)));
      c.once("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on ${port}`);
}

// Account mails reach the SMTP sink that scripts/e2e-server.sh starts; it files them here.
const port = Number(process.env.HITCURVE_E2E_PORT ?? 18765);
export const MAILS = join(fileURLToPath(new URL(".", import.meta.url)), "..", "..", ".run", "test", `e2e-mail-${port}`);

/** The newest mail to `to` filed after `after` (ms since the epoch), as raw text with the
 * quoted-printable soft line breaks removed; waits for it to arrive. */
export async function mailTo(to: string, after: number, match: RegExp = /./): Promise<string> {
  let text = "";
  await expect
    .poll(() => {
      const files = readdirSync(MAILS)
        .filter((f) => f.endsWith(`-${to}.eml`) && Number(f.split("-")[0]) / 1e6 >= after)
        .sort();
      text = files.length ? readFileSync(join(MAILS, files[files.length - 1]), "utf8").replace(/=\r?\n/g, "") : "";
      return match.test(text);
    }, { timeout: 120_000 }) // sent after the response, by a loaded machine
    .toBe(true);
  return text;
}

/** The newest link to `path` in a mail to `to`, waiting for the mail to arrive. */
export async function linkFromMail(to: string, path: string, after: number, chars = "A-Za-z0-9_-"): Promise<string> {
  const re = new RegExp(`https?://\\S+?(${path}[${chars}]+)`);
  return (await mailTo(to, after, re)).match(re)![1];
}

/** After a change of the viewport, the page fits it: no sideways scroll. Waits a little, since
 * the charts lay themselves out again on their ResizeObserver, a frame or more after the resize
 * (at a load of ~20 a chart still had its 1440 px width when the page was measured at once); a
 * page that stays too wide fails. */
export async function fitsTheViewport(page: Page, what = "page") {
  await expect
    .poll(() => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), {
      message: `${what} wider than the viewport`,
      timeout: 10_000,
    })
    .toBeLessThanOrEqual(0);
}

/** Desktop and 390 px screenshots of the page; at 390 px it must not scroll sideways. */
export async function shots(page: Page, name: string) {
  await page.screenshot({ path: `artifacts/${name}-desktop.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await fitsTheViewport(page, `${name} at 390 px`);
  await page.screenshot({ path: `artifacts/${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** A new account of its own for a check, made as a user makes one: sign up (202, "check your
 * inbox"), then follow the link mailed to the address (to the SMTP sink), which logs the page's
 * context in. */
export async function signUpConfirmed(page: Page, email: string, password: string, orgName: string) {
  const started = Date.now();
  const signup = await page.request.post("/api/v1/auth/signup", { data: { email, password, org_name: orgName } });
  expect(signup.status()).toBe(202);
  const link = await linkFromMail(email, "/signup/confirm/", started);
  const confirmed = await page.request.post("/api/v1/auth/signup/confirm", { data: { token: link.split("/").pop() } });
  expect(confirmed.status(), await confirmed.text()).toBe(201);
}

/** The repository's root (the e2e folder's parent). */
export const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..", "..");

/** The e2e backend's settings: the test services' (.run/test/env) with its own database
 * (scripts/e2e-server.sh: one per server port). */
export function e2eEnv(baseURL: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(ROOT, ".run/test/env"), "utf8").split("\n")) {
    const m = /^(HITCURVE_[A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]] = m[2];
  }
  const url = env.HITCURVE_DATABASE_URL;
  env.HITCURVE_DATABASE_URL = `${url.slice(0, url.lastIndexOf("/"))}/hitcurve_e2e_${new URL(baseURL).port}`;
  return env;
}

/** Seed e2e/consistency_states.py's states (real `make demo` windows replayed through the upload
 * path and the worker's task) with `args` (seed [EMAIL [STATE,...]]) under the environment `env`,
 * and answer its JSON line. Synchronous: it takes minutes on a loaded machine, and the test waits
 * for it. Seeded once per run and database: the answer is kept in the run's output directory
 * (Playwright empties it when a run starts), so a second spec asking for the same states logs in
 * to the same account instead of replaying every window again. */
export function seedStates<T>(env: NodeJS.ProcessEnv, ...args: string[]): T {
  const db = String(env.HITCURVE_DATABASE_URL ?? "").split("/").pop();
  const kept = join(ROOT, "e2e/test-results", `.seeded-${db}-${args.join("-") || "all"}.json`);
  if (existsSync(kept)) return JSON.parse(readFileSync(kept, "utf8")) as T;
  const out = execFileSync(join(ROOT, ".venv/bin/python"), [join(ROOT, "e2e/consistency_states.py"), "seed", ...args], {
    env,
    maxBuffer: 1 << 24,
  });
  const line = out.toString().trim().split("\n").pop()!;
  mkdirSync(dirname(kept), { recursive: true });
  writeFileSync(kept, line);
  return JSON.parse(line) as T;
}

/** Log in as an account a seed made. */
export async function logInAs(page: Page, email: string, password: string) {
  await page.goto("/login");
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page.getByRole("heading", { name: "Clusters" })).toBeVisible();
}

/** Run one of e2e/'s worker stand-ins (process_uploads.py, deliver_pending.py) against the e2e
 * backend's database, as the worker would: the e2e backend runs no worker. Answers its JSON line.
 * Asynchronous, so a receiver served by this test process answers while the step runs. */
export async function runWorkerStep<T = unknown>(baseURL: string, script: string, ...args: string[]): Promise<T> {
  const env = { ...process.env, ...e2eEnv(baseURL) };
  const { stdout } = await promisify(execFile)(join(ROOT, ".venv/bin/python"), [join(ROOT, "e2e", script), ...args], { env });
  return JSON.parse(stdout.trim().split("\n").pop()!) as T;
}
