import { test } from "@playwright/test";
import { api, expect, logIn, serverId } from "./helpers";

test("the dashboard is served by the backend and asks an anonymous visitor to log in", async ({ page }) => {
  const health = await page.request.get("/api/v1/health");
  expect(health.status()).toBe(200);
  const body = await health.json();
  expect(body.checks.database.ok && body.checks.redis.ok).toBe(true);
  // No worker runs beside the browser checks: the service says so instead of "ok".
  if (body.checks.workers.alive === 0) {
    expect(body.status).toBe("degraded");
    expect(body.checks.workers.error).toContain("no worker heartbeat");
  }
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Log in" })).toBeVisible();
  await page.screenshot({ path: "artifacts/login.png", fullPage: true });
});

// Every answer carries a Content-Security-Policy (scripts and styles from the dashboard's own
// origin, frame-ancestors 'none'; the API docs their own): no page of the dashboard or the docs
// may need anything it refuses. Chromium reports each refusal as a console error and a
// securitypolicyviolation event.
test("no page of the dashboard or the API docs is refused anything by its content policy", async ({ page }) => {
  const refused: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy/i.test(m.text())) refused.push(`${page.url()}: ${m.text()}`);
  });
  await page.exposeFunction("__cspRefused", (what: string) => refused.push(`${page.url()}: ${what}`));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      (window as unknown as { __cspRefused: (w: string) => void }).__cspRefused(
        `${e.violatedDirective} refused ${e.blockedURI}`,
      );
    });
  });
  await logIn(page);
  const server = await serverId(page, "10.0.0.7:11211");
  const clusters = await api<Array<{ id: string; name: string }>>(page, "/clusters");
  const cluster = clusters.find((c) => c.name === "web-cache")!.id;
  const pages: Array<[string, string]> = [
    ["/", ".cluster-card"],
    ["/servers", "[data-testid=servers]"],
    [`/servers/${server}`, "[data-testid=curve-chart]"],
    [`/servers/${server}/history`, "main"],
    [`/clusters/${cluster}`, "[data-testid=curve-chart]"],
    ["/alerts", "[data-testid=alerts]"],
    ["/reports", "main"],
    ["/agents", "main"],
    ["/api/v1/docs", ".swagger-ui .info .title"],
    ["/api/v1/redoc", "redoc h1"],
  ];
  for (const [path, ready] of pages) {
    const answer = await page.goto(path);
    expect(answer!.headers()["content-security-policy"], path).toContain("frame-ancestors 'none'");
    await expect(page.locator(ready).first(), path).toBeVisible();
  }
  // ReDoc's bundle shows a "powered by" logo from its vendor's CDN: the policy refuses it as it
  // refuses anything from outside (the docs are served offline), and only that logo is missing.
  expect(refused.filter((r) => !r.includes("https://cdn.redoc.ly/"))).toEqual([]);
});
