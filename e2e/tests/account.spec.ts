import { readdirSync } from "node:fs";
import { test } from "@playwright/test";
import { EMAIL, MAILS, PASSWORD, expect, linkFromMail, logIn, shots, signUpConfirmed } from "./helpers";

test("password reset by e-mail: same answer for unknown e-mails, single-use link, weak password refused", async ({ page, browser }) => {
  const started = Date.now();
  await page.goto("/login");
  await page.getByRole("link", { name: "Forgot your password?" }).click();
  await expect(page.getByRole("heading", { name: "Forgot your password?" })).toBeVisible();
  await shots(page, "forgot-password");
  // an unknown e-mail gets the same page, and no mail
  await page.getByLabel("E-mail").fill("nobody-here@example.com");
  await page.getByRole("button", { name: "Send reset link" }).click();
  const unknownAnswer = await page.getByRole("status").textContent();
  await page.goto("/forgot-password");
  await page.getByLabel("E-mail").fill(EMAIL);
  await page.getByRole("button", { name: "Send reset link" }).click();
  await expect(page.getByRole("heading", { name: "Check your e-mail" })).toBeVisible();
  expect((await page.getByRole("status").textContent())?.replace(EMAIL, "X")).toBe(unknownAnswer?.replace("nobody-here@example.com", "X"));
  await shots(page, "reset-sent");
  const link = await linkFromMail(EMAIL, "/reset-password/", started);
  expect(readdirSync(MAILS).filter((f) => f.endsWith("-nobody-here@example.com.eml"))).toEqual([]);

  await page.goto(link);
  await expect(page.getByRole("heading", { name: "Choose a new password" })).toBeVisible();
  await page.locator("input[autocomplete=new-password]").fill("password1234");
  await page.getByRole("button", { name: "Set new password" }).click();
  await expect(page.getByRole("alert")).toContainText("too easy to guess");
  await shots(page, "reset-weak");
  const fresh = "violet tractor summons gravel";
  await page.locator("input[autocomplete=new-password]").fill(fresh);
  await page.getByRole("button", { name: "Set new password" }).click();
  await expect(page.getByRole("heading", { name: "Password changed" })).toBeVisible();
  // the link works once
  await page.goto(link);
  await page.locator("input[autocomplete=new-password]").fill(PASSWORD + " again");
  await page.getByRole("button", { name: "Set new password" }).click();
  await expect(page.getByRole("alert")).toContainText("invalid, used or expired");
  // log in with the new password, then put the seeded one back for the other checks
  const ctx = await browser.newContext();
  const p2 = await ctx.newPage();
  await p2.goto("/login");
  await p2.getByLabel("E-mail").fill(EMAIL);
  await p2.getByLabel("Password").fill(fresh);
  await p2.getByRole("button", { name: "Log in" }).click();
  await expect(p2.getByRole("heading", { name: "Clusters" })).toBeVisible();
  const csrf = (await ctx.cookies()).find((c) => c.name === "hitcurve_csrf")!.value;
  const r = await p2.request.post("/api/v1/auth/password", {
    data: { current_password: fresh, new_password: PASSWORD },
    headers: { "X-CSRF-Token": csrf },
  });
  expect(r.status()).toBe(204);
  await ctx.close();
});

test("an invitation joins the organization only when the invited user accepts it", async ({ page, browser }) => {
  // two accounts, three log-ins (each an argon2 hash) and a mail: at CI's load over 180 s
  test.slow();
  const started = Date.now();
  const invitee = `invitee-${started}@example.com`;
  const invPassword = "amber walrus kitchen lamp";
  // the invitee has an account of their own
  const ctx = await browser.newContext();
  const p2 = await ctx.newPage();
  await signUpConfirmed(p2, invitee, invPassword, "Invitee Org");
  // the owner invites them
  await logIn(page);
  const csrf = (await page.context().cookies()).find((c) => c.name === "hitcurve_csrf")!.value;
  const inv = await page.request.post("/api/v1/org/invitations", { data: { email: invitee, role: "viewer" }, headers: { "X-CSRF-Token": csrf } });
  expect(inv.status()).toBe(201);
  const link = await linkFromMail(invitee, "/invite/", started);
  // not a member before accepting
  const members = async () => ((await (await page.request.get("/api/v1/org/members")).json()) as Array<{ email: string }>).map((m) => m.email);
  expect(await members()).not.toContain(invitee);

  // logged out, the link says what it offers and asks to log in as the invited e-mail
  await p2.context().clearCookies();
  await p2.goto(link);
  await expect(p2.getByRole("heading", { name: "Join Hitcurve Demo" })).toBeVisible();
  await shots(p2, "invite-logged-out");
  await p2.getByRole("link", { name: "Log in" }).click();
  await p2.getByLabel("E-mail").fill(invitee);
  await p2.getByLabel("Password").fill(invPassword);
  await p2.getByRole("button", { name: "Log in" }).click();
  // back on the invitation, now with the button
  await expect(p2.getByRole("button", { name: "Join Hitcurve Demo" })).toBeVisible();
  await shots(p2, "invite-accept");
  await p2.getByRole("button", { name: "Join Hitcurve Demo" }).click();
  await expect(p2.getByRole("heading", { name: "Clusters" })).toBeVisible();
  await expect(p2.getByTestId("org-switch")).toContainText("Hitcurve Demo (viewer)");
  expect(await members()).toContain(invitee);
  // single use
  await p2.goto(link);
  await expect(p2.getByRole("alert")).toContainText("invalid, was used, withdrawn or expired");
  await ctx.close();
});

test("owners invite from the Members page, see the invitation pending and revoke it", async ({ page }) => {
  const started = Date.now();
  const invitee = `pending-${started}@example.com`;
  await logIn(page);
  await page.getByRole("link", { name: "Members", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Members", level: 1 })).toBeVisible();
  await expect(page.getByTestId("members")).toContainText(EMAIL);
  await page.getByLabel("E-mail").fill(invitee);
  await page.getByLabel("Role").selectOption("viewer");
  await page.getByRole("button", { name: "Send invitation" }).click();
  await expect(page.getByRole("status")).toContainText(`Invitation sent to ${invitee} as viewer`);
  const row = page.getByTestId("invitations").getByRole("row").filter({ hasText: invitee });
  await expect(row).toContainText("viewer");
  // the mail went out with a link the invitee can open (and nobody was added yet)
  const link = await linkFromMail(invitee, "/invite/", started);
  await expect(page.getByTestId("members")).not.toContainText(invitee);
  // inviting a member again is refused with the API's reason
  await page.getByLabel("E-mail").fill(EMAIL);
  await page.getByRole("button", { name: "Send invitation" }).click();
  await expect(page.getByRole("alert")).toContainText("already a member");
  await shots(page, "members");
  // revoke: the row leaves the list (after a reload too) and the mailed link stops working
  await row.getByRole("button", { name: `Revoke the invitation of ${invitee}` }).click();
  await expect(page.getByTestId("invitations").getByRole("row").filter({ hasText: invitee })).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole("heading", { name: "Pending invitations" })).toBeVisible();
  await expect(page.getByText(invitee)).toHaveCount(0);
  await page.goto(link);
  await expect(page.getByRole("alert")).toContainText("invalid, was used, withdrawn or expired");
});
