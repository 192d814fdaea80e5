import { test } from "@playwright/test";
import { expect, linkFromMail, shots } from "./helpers";

// Acceptance, as two new people use the product in `make demo`'s configuration (every mail goes to
// the repository's SMTP sink, scripts/mailsink.py, which files it for the reader; here under
// .run/test/e2e-mail-<port>/, in the demo under .run/dev/mail/): one signs up on the sign-up page,
// finds the confirmation in the sink, follows it, invites a colleague from the Members page; the
// colleague, with no account yet, opens the invitation from the sink, creates an account from it,
// confirms it by its mail and joins. Everything through the browser; no API call, no database.
test("sign-up, confirmation mail, invitation, and a second user joins", async ({ page, browser }) => {
  const started = Date.now();
  const owner = `founder-${started}@example.com`;
  const colleague = `colleague-${started}@example.com`;
  const org = `Acceptance Org ${started}`;

  await page.goto("/signup");
  await page.getByLabel("Organization name").fill(org);
  await page.getByLabel("E-mail").fill(owner);
  await page.getByLabel("Password").fill("violet harbour cinema 42");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByRole("heading", { name: "Check your inbox" })).toBeVisible();
  await expect(page.getByText(`We sent a message to ${owner}`)).toBeVisible();
  await page.goto(await linkFromMail(owner, "/signup/confirm/", started));
  await expect(page.getByRole("heading", { name: "Clusters" })).toBeVisible();
  await expect(page.getByTestId("org-switch")).toContainText(org);

  // the new owner invites a colleague as a member
  await page.goto("/members");
  await page.getByLabel("E-mail").fill(colleague);
  await page.getByLabel("Role").selectOption("member");
  await page.getByRole("button", { name: "Send invitation" }).click();
  await expect(page.getByRole("status")).toContainText(`Invitation sent to ${colleague} as member`);
  const invite = await linkFromMail(colleague, "/invite/", started);

  // the colleague has no account: the invitation leads to the sign-up, its mail back to the invitation
  const ctx = await browser.newContext();
  const p2 = await ctx.newPage();
  await p2.goto(invite);
  await expect(p2.getByRole("heading", { name: `Join ${org}` })).toBeVisible();
  await p2.getByRole("link", { name: "create an account" }).click();
  await p2.getByLabel("Organization name").fill("Colleague's own");
  await p2.getByLabel("E-mail").fill(colleague);
  await p2.getByLabel("Password").fill("granite otter lantern 7");
  const signedUp = Date.now();
  await p2.getByRole("button", { name: "Create account" }).click();
  await expect(p2.getByRole("heading", { name: "Check your inbox" })).toBeVisible();
  await p2.goto(await linkFromMail(colleague, "/signup/confirm/", signedUp));
  await expect(p2.getByRole("button", { name: `Join ${org}` })).toBeVisible();
  await shots(p2, "acceptance-invite-accept");
  await p2.getByRole("button", { name: `Join ${org}` }).click();
  await expect(p2.getByRole("heading", { name: "Clusters" })).toBeVisible();
  // now in both organizations, acting in the one joined
  const sw = p2.getByTestId("org-switch");
  await expect(sw.locator("option")).toHaveCount(2);
  await expect(sw).toContainText("Colleague's own");
  await expect(sw.locator("option:checked")).toHaveText(org);

  // the owner sees the colleague among the members
  await page.reload();
  await expect(page.getByTestId("members").getByRole("row").filter({ hasText: colleague })).toContainText("member");
  await shots(page, "acceptance-members");
  await ctx.close();
});
