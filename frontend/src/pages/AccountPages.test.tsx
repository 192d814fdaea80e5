import { fireEvent, render, screen } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";
import type { Session } from "../api/types";
import { ME, fakeApi } from "../test/fakeApi";
import { ConfirmSignupPage, ForgotPasswordPage, InvitePage, ResetPasswordPage } from "./AccountPages";
import { AuthPage } from "./AuthPages";

afterEach(() => vi.unstubAllGlobals());
const as = (email: string): Session => ({ user: { id: "u", email, name: null }, orgs: [{ id: "o1", name: "Own", role: "owner" }], currentOrgId: "o1" });
const view = { org_name: "Acme", role: "viewer", email: "ada@example.com", invited_by: "boss@example.com", expires_at: "2026-12-01T00:00:00Z" };

test("an invitation is accepted only by a user logged in with the invited e-mail", async () => {
  const calls = fakeApi({
    "GET /api/v1/invitations/tok123": view,
    "POST /api/v1/invitations/accept": { org_id: "o2", org_name: "Acme", role: "viewer" },
    "POST /api/v1/auth/switch-org": ME,
  });
  const joined = vi.fn();
  const { unmount } = render(<InvitePage token="tok123" session={as("eve@example.com")} onJoined={joined} />);
  expect((await screen.findByRole("alert")).textContent).toContain("log in as ada@example.com");
  expect(screen.queryByRole("button", { name: "Join Acme" })).toBeNull();
  unmount();

  render(<InvitePage token="tok123" session={as("ADA@example.com")} onJoined={joined} />);
  fireEvent.click(await screen.findByRole("button", { name: "Join Acme" }));
  await vi.waitFor(() => expect(joined).toHaveBeenCalled());
  const posts = calls.filter((c) => c.method === "POST");
  expect(posts.map((c) => [c.url.pathname, c.body])).toEqual([
    ["/api/v1/invitations/accept", { token: "tok123" }],
    ["/api/v1/auth/switch-org", { org_id: "o2" }], // on into the organization joined, before onJoined
  ]);
});

test("logged out, an invitation offers log-in and sign-up that come back to it", async () => {
  fakeApi({ "GET /api/v1/invitations/tok123": view });
  render(<InvitePage token="tok123" session={null} onJoined={() => undefined} />);
  const login = await screen.findByRole("link", { name: "Log in" });
  expect(login.getAttribute("href")).toBe("/login?next=%2Finvite%2Ftok123");
  expect(screen.getByRole("link", { name: "create an account" }).getAttribute("href")).toBe("/signup?next=%2Finvite%2Ftok123");
});

test("a refused new password shows the backend's reason", async () => {
  fakeApi({
    "POST /api/v1/auth/password-reset/confirm": () => ({
      status: 422,
      body: { detail: [{ loc: ["body", "new_password"], msg: "this password is too easy to guess", type: "weak_password" }] },
    }),
  });
  const { container } = render(<ResetPasswordPage token="abc" />);
  fireEvent.change(container.querySelector("input")!, { target: { value: "password1234" } });
  fireEvent.click(screen.getByRole("button", { name: "Set new password" }));
  expect((await screen.findByRole("alert")).textContent).toContain("too easy to guess");
});

test("sign-up answers 'check your inbox' and the mailed link logs in once, back where it started", async () => {
  const answer = { detail: "check your inbox: we sent a message to this address" };
  const calls = fakeApi({ "POST /api/v1/auth/signup": () => ({ status: 202, body: answer }), "POST /api/v1/auth/signup/confirm": () => ({ status: 201, body: ME }) });
  const onSession = vi.fn();
  const { container, unmount } = render(<AuthPage mode="signup" onSession={onSession} next="/invite/tok123" />);
  const [org, email, password] = Array.from(container.querySelectorAll("input"));
  fireEvent.change(org, { target: { value: "Acme" } });
  fireEvent.change(email, { target: { value: "ada@example.com" } });
  fireEvent.change(password, { target: { value: "correct horse battery" } });
  fireEvent.click(screen.getByRole("button", { name: "Create account" }));
  expect((await screen.findByRole("heading", { name: "Check your inbox" })).textContent).toBeTruthy();
  expect(onSession).not.toHaveBeenCalled();
  unmount();

  const confirmed = vi.fn();
  render(<ConfirmSignupPage token="link-secret-0123456789" onSession={confirmed} />);
  await vi.waitFor(() => expect(confirmed).toHaveBeenCalled());
  expect(confirmed.mock.calls[0][1]).toBe("/invite/tok123");
  expect(calls.filter((c) => c.url.pathname === "/api/v1/auth/signup/confirm").map((c) => c.body)).toEqual([{ token: "link-secret-0123456789" }]);
});

test("a used sign-up link says so and offers to sign up again or log in", async () => {
  fakeApi({
    "POST /api/v1/auth/signup/confirm": () => ({ status: 400, body: { detail: "this sign-up link is invalid, used or expired; sign up again or log in", code: "signup_invalid" } }),
  });
  render(<ConfirmSignupPage token="used-link-0123456789" onSession={() => undefined} />);
  expect((await screen.findByRole("alert")).textContent).toContain("used or expired");
  expect(screen.getByRole("link", { name: "Sign up again" }).getAttribute("href")).toBe("/signup");
});

test("with the mail server down, sign-up and the password reset say why and never 'sent'", async () => {
  const down = {
    status: 503,
    body: {
      code: "mail_unavailable",
      detail:
        "no e-mail can be sent now: the mail server 127.0.0.1:2525 does not answer (ConnectionRefusedError: [Errno 111] Connection refused). Nothing was changed",
    },
  };
  fakeApi({ "POST /api/v1/auth/signup": () => down, "POST /api/v1/auth/password-reset": () => down });
  const { container, unmount } = render(<AuthPage mode="signup" onSession={vi.fn()} />);
  const [org, email, password] = Array.from(container.querySelectorAll("input"));
  fireEvent.change(org, { target: { value: "Acme" } });
  fireEvent.change(email, { target: { value: "ada@example.com" } });
  fireEvent.change(password, { target: { value: "correct horse battery" } });
  fireEvent.click(screen.getByRole("button", { name: "Create account" }));
  expect((await screen.findByRole("alert")).textContent).toContain("the mail server 127.0.0.1:2525 does not answer (ConnectionRefusedError");
  expect(screen.queryByRole("heading", { name: "Check your inbox" })).toBeNull();
  expect(container.textContent).not.toMatch(/we sent/i);
  unmount();

  const forgot = render(<ForgotPasswordPage />);
  fireEvent.change(forgot.container.querySelector("input")!, { target: { value: "ada@example.com" } });
  fireEvent.click(screen.getByRole("button"));
  expect((await screen.findByRole("alert")).textContent).toContain("does not answer");
  expect(forgot.container.textContent).not.toMatch(/check your e-mail|on its way/i);
});
