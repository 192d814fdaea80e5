import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import { test } from "@playwright/test";
import { expect, freePort, logIn, shots } from "./helpers";

// An owner adds a signed webhook channel on the alerts page, sends a test to a real local receiver
// and sees it in the delivery log; the receiver checks the signature with the secret shown once.
test("notification channels: add a signed webhook, send a test, read the delivery log", async ({ page }) => {
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
    const added = section.getByRole("status");
    await expect(added).toContainText(`Channel “${name}” added. Its signing secret, shown only now:`);
    const secret = (await added.textContent())!.split("shown only now: ")[1].trim();
    const row = page.getByTestId("channels").locator(`tr[data-channel="${name}"]`);
    await expect(row).toContainText("signed");

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
