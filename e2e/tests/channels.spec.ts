import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import { test } from "@playwright/test";
import { api, expect, freePort, logIn, runWorkerStep, shots } from "./helpers";

// An owner adds a signed webhook channel on the alerts page while alerts are open, sends it those
// alerts and a test, all reaching a real local receiver, and sees them in the delivery log; the
// receiver checks each signature with the secret shown once.
test("notification channels: add a signed webhook, send it the open alerts and a test, read the delivery log", async ({ page, baseURL }) => {
  const got: Array<{ headers: IncomingMessage["headers"]; body: string }> = [];
  const port = await freePort();
  const receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      got.push({ headers: req.headers, body });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((r) => receiver.listen(port, "127.0.0.1", r));
  try {
    await logIn(page);
    await page.goto("/alerts");
    const form = page.getByRole("form", { name: "Add a channel" });
    const name = `ops-hook-${Date.now()}`;
    await form.getByLabel("Name").fill(name);
    await form.getByLabel("Kind").selectOption("webhook");
    await form.getByLabel("URL").fill(`http://127.0.0.1:${port}/hook`);
    await form.getByRole("button", { name: "Add channel" }).click();
    const section = page.locator("section.channels");
    await expect(section.getByRole("status")).toContainText(`Channel “${name}” added.`);
    const created = page.getByTestId("channel-created");
    const secret = (await created.getByTestId("channel-secret").textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await expect(created.getByRole("button", { name: "Copy" })).toBeVisible();
    const row = page.getByTestId("channels").locator(`tr[data-channel="${name}"]`);
    await expect(row).toContainText("signed");

    // The seeded organization has open alerts: the new channel (warning and above) is offered them.
    type A = { severity: string };
    const open = (await api<A[]>(page, "/alerts?state=open")).filter((a) => a.severity !== "info").length;
    expect(open).toBeGreaterThan(0);
    await expect(created).toContainText(`${open} alert${open === 1 ? " is" : "s are"} open now`);
    await created.getByRole("button", { name: new RegExp(`^Send (it|the ${open}) to`) }).click();
    await expect(section.getByRole("status")).toContainText(`${open} open alert${open === 1 ? "" : "s"} queued for “${name}”`);
    const sent = await runWorkerStep<{ attempted: number; results: Array<{ status: string }> }>(baseURL!, "deliver_pending.py");
    expect(sent.results.map((r) => r.status)).toEqual(Array(open).fill("delivered"));
    expect(got.map((g) => JSON.parse(g.body).event)).toEqual(Array(open).fill("alert.opened"));
    for (const g of got) {
      expect(String(g.headers["x-hitcurve-signature"])).toBe(`sha256=${createHmac("sha256", secret).update(g.body).digest("hex")}`);
    }
    got.length = 0;

    await row.getByRole("button", { name: "Send test" }).click();
    await expect(section.getByRole("status")).toContainText(`Test to “${name}”: delivered (HTTP 200)`);
    expect(got).toHaveLength(1);
    const sig = String(got[0].headers["x-hitcurve-signature"]);
    expect(sig).toBe(`sha256=${createHmac("sha256", secret).update(got[0].body).digest("hex")}`);
    await expect(page.getByTestId("deliveries").locator("tr", { hasText: name }).first()).toContainText("delivered");
    await expect(row).toContainText("delivered");
    await shots(page, "alerts-channels");
  } finally {
    receiver.close();
  }
});
