import { createServer } from "node:http";
import { test } from "@playwright/test";
import { expect, freePort, logIn, shots } from "./helpers";

// A self-hosted install's administrator (HITCURVE_ADMIN_EMAILS: the e2e owner, scripts/e2e-server.sh)
// refuses and allows private channel targets on the alerts page; the running backend follows at
// once, no restart: a loopback webhook is refused with the reason, then accepted.
test("private channel targets: refused and allowed again on the alerts page, without a restart", async ({ page }) => {
  const port = await freePort();
  const receiver = createServer((_req, res) => res.writeHead(200).end("ok"));
  await new Promise<void>((r) => receiver.listen(port, "127.0.0.1", r));
  try {
    await logIn(page);
    await page.goto("/alerts");
    const card = page.getByTestId("private-targets");
    const box = card.getByLabel("Allow private addresses for this install (self-hosted receivers)");
    await expect(box).toBeChecked(); // the e2e server allows them (python -m hitcurve.notify.install_admin)
    await box.click(); // the box shows the stored setting: it changes once the API has answered
    await expect(card).toContainText("Channels may target public addresses only");
    await expect(box).not.toBeChecked();

    const form = page.getByRole("form", { name: "Add a channel" });
    const name = `local-hook-${Date.now()}`;
    await form.getByLabel("Name").fill(name);
    await form.getByLabel("Kind").selectOption("webhook");
    await form.getByLabel("URL").fill(`http://127.0.0.1:${port}/hook`);
    await form.getByRole("button", { name: "Add channel" }).click();
    const section = page.locator("section.channels");
    await expect(section.getByRole("alert")).toContainText("127.0.0.1, a loopback address");
    await expect(section.getByRole("alert")).toContainText("administrator can allow private ones on the alerts page");
    await shots(page, "private-targets-refused");

    await box.click();
    await expect(card).toContainText("Channels may target private addresses");
    await expect(box).toBeChecked();
    await form.getByRole("button", { name: "Add channel" }).click();
    await expect(section.getByRole("status")).toContainText(`Channel “${name}” added.`);
    await shots(page, "private-targets-allowed");
  } finally {
    receiver.close();
  }
});
