// Pages reached from e-mails: confirm a sign-up, forgot password, choose a new password (reset link), an invitation
// link that the invited person accepts while logged in with the invited e-mail, and the weekly
// report's recipient confirmation and unsubscribe links (one click, no log-in).
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import {
  acceptInvitation,
  confirmPasswordReset,
  confirmSignup,
  fetchInvitation,
  requestPasswordReset,
  switchOrg,
  confirmRecipient,
  unsubscribe,
  type InvitationView,
  type Unsubscribed,
} from "../api/endpoints";
import type { Session } from "../api/types";
import { Link } from "../components/Link";
import { navigate } from "../router";
import { takeNext } from "./AuthPages";

function Card({ title, children, onSubmit }: { title: string; children: ReactNode; onSubmit?: (e: FormEvent) => void }) {
  const body = (
    <>
      <p className="brand">
        <span className="logo" aria-hidden="true">
          ◜
        </span>{" "}
        Hitcurve
      </p>
      <h1 id="account-title">{title}</h1>
      {children}
    </>
  );
  return (
    <main className="auth">
      {onSubmit ? (
        <form className="card auth-card" onSubmit={onSubmit} aria-labelledby="account-title">
          {body}
        </form>
      ) : (
        <section className="card auth-card" aria-labelledby="account-title">
          {body}
        </section>
      )}
    </main>
  );
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function ForgotPasswordPage() {
  const [email, setEmail] = useState("");
  const [sent, setSent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setSent(await requestPasswordReset(email));
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  if (sent)
    return (
      <Card title="Check your e-mail">
        <p role="status">
          If an account uses <strong>{email}</strong>, a link to choose a new password is on its way. It works once, for one hour.
        </p>
        <p className="muted">
          <Link href="/login">Back to log in</Link>
        </p>
      </Card>
    );
  return (
    <Card title="Forgot your password?" onSubmit={submit}>
      <p className="muted">We will e-mail you a link to choose a new one.</p>
      <label>
        E-mail
        <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required autoComplete="email" />
      </label>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="primary" disabled={busy}>
        {busy ? "…" : "Send reset link"}
      </button>
      <p className="muted">
        <Link href="/login">Back to log in</Link>
      </p>
    </Card>
  );
}

export function ResetPasswordPage({ token }: { token: string }) {
  const [password, setPassword] = useState("");
  const [done, setDone] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await confirmPasswordReset(token, password);
      setDone(true);
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  if (done)
    return (
      <Card title="Password changed">
        <p role="status">Your new password is set, and every session of your account was logged out.</p>
        <button type="button" className="primary" onClick={() => (window.location.href = "/login")}>
          Log in
        </button>
      </Card>
    );
  return (
    <Card title="Choose a new password" onSubmit={submit}>
      <label>
        New password
        <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} required minLength={10} autoComplete="new-password" />
        <span className="hint">At least 10 characters, not a common or easily guessed one. A few unrelated words work well.</span>
      </label>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="primary" disabled={busy}>
        {busy ? "…" : "Set new password"}
      </button>
      <p className="muted">
        Link expired? <Link href="/forgot-password">Ask for a new one</Link>
      </p>
    </Card>
  );
}

export function InvitePage({ token, session, onJoined }: { token: string; session: Session | null; onJoined: () => void }) {
  const [invite, setInvite] = useState<InvitationView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    fetchInvitation(token).then(setInvite, (e) => setError(message(e)));
  }, [token]);
  const accept = async () => {
    setBusy(true);
    setError(null);
    try {
      const joined = await acceptInvitation(token);
      await switchOrg(String(joined.org_id)); // on into the organization just joined
      onJoined();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  if (!invite)
    return (
      <Card title="Invitation">
        {error ? (
          <p className="form-error" role="alert">
            {error}
          </p>
        ) : (
          <p className="muted">Loading…</p>
        )}
        <p className="muted">
          <Link href="/">Go to Hitcurve</Link>
        </p>
      </Card>
    );
  const here = `/invite/${encodeURIComponent(token)}`;
  const sameEmail = session && session.user.email.toLowerCase() === invite.email.toLowerCase();
  return (
    <Card title={`Join ${invite.orgName}`}>
      <p>
        {invite.invitedBy ?? "An owner"} invites <strong>{invite.email}</strong> to join <strong>{invite.orgName}</strong> as{" "}
        <strong>{invite.role}</strong>.
      </p>
      {!session && (
        <p className="muted">
          <Link href={`/login?next=${encodeURIComponent(here)}`}>Log in</Link> or{" "}
          <Link href={`/signup?next=${encodeURIComponent(here)}`}>create an account</Link> with {invite.email} to accept.
        </p>
      )}
      {session && !sameEmail && (
        <p className="form-error" role="alert">
          You are logged in as {session.user.email}. Log out and log in as {invite.email} to accept.
        </p>
      )}
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      {sameEmail && (
        <button type="button" className="primary" onClick={accept} disabled={busy}>
          {busy ? "…" : `Join ${invite.orgName}`}
        </button>
      )}
      <p className="muted">
        <Link href="/" onClick={() => navigate("/")}>
          Not now
        </Link>
      </p>
    </Card>
  );
}

/** Follows a report mail's link once, as its page opens: the API calls are idempotent, but a
 * second call (React's strict mode runs effects twice) would answer "already". */
function useFollowedLink(token: string, follow: (token: string) => Promise<Unsubscribed>) {
  const [done, setDone] = useState<Unsubscribed | null>(null);
  const [error, setError] = useState<string | null>(null);
  const asked = useRef<string | null>(null);
  useEffect(() => {
    if (asked.current === token) return;
    asked.current = token;
    follow(token).then(setDone, (e) => setError(message(e)));
  }, [token, follow]);
  return { done, error };
}

/** A followed link's page while it waits for the answer, or when the link was refused. */
function LinkNotDone({ title, error, waiting, children }: { title: string; error: string | null; waiting: string; children?: ReactNode }) {
  return (
    <Card title={title}>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : (
        <p role="status">{waiting}</p>
      )}
      {error && children}
    </Card>
  );
}

/** A report recipient's confirmation link: following it is the consent, so the page confirms as it
 * opens and says what the address will receive. */
export function ConfirmReportPage({ token }: { token: string }) {
  const { done, error } = useFollowedLink(token, confirmRecipient);
  if (!done) return <LinkNotDone title="Confirm the weekly report" error={error} waiting="Confirming…" />;
  return (
    <Card title="Subscription confirmed">
      <p role="status">
        <strong>{done.email}</strong> {done.already ? "had already confirmed" : "will receive"} the weekly Hitcurve report about {done.about} of{" "}
        <strong>{done.orgName}</strong>.
      </p>
      <p className="muted">Each report carries a one-click unsubscribe link.</p>
    </Card>
  );
}

/** The weekly report's unsubscribe link: the click in the e-mail is the consent, so the page
 * unsubscribes as it opens and says what changed. */
export function UnsubscribePage({ token }: { token: string }) {
  const { done, error } = useFollowedLink(token, unsubscribe);
  if (!done)
    return (
      <LinkNotDone title="Unsubscribe" error={error} waiting="Unsubscribing…">
        <p>
          <Link href="/reports">Manage report subscriptions</Link> (after logging in)
        </p>
      </LinkNotDone>
    );
  return (
    <Card title="You are unsubscribed">
      <p role="status">
        {done.email ? (
          <>
            <strong>{done.email}</strong> {done.already ? "was already unsubscribed from" : "will no longer receive"} the weekly Hitcurve
            report about {done.about} of <strong>{done.orgName}</strong>.
          </>
        ) : (
          "This subscription no longer exists: no more reports go out for it."
        )}
      </p>
      <p className="muted">
        Changed your mind? Members of the organization can subscribe again on the <Link href="/reports">Reports page</Link>.
      </p>
    </Card>
  );
}

/** The sign-up confirmation link: creates the account, logs in and goes on (to an invitation the
 * sign-up came from, or the dashboard). */
export function ConfirmSignupPage({ token, onSession }: { token: string; onSession: (s: Session, next: string) => void }) {
  const [error, setError] = useState<string | null>(null);
  const spent = useRef<string | null>(null);
  useEffect(() => {
    // the link works once: never post it twice (React's strict mode runs effects twice)
    if (spent.current === token) return;
    spent.current = token;
    confirmSignup(token).then(
      (s) => onSession(s, takeNext()),
      (e) => setError(message(e)),
    );
  }, [token, onSession]);
  return (
    <Card title="Confirm your e-mail">
      {error ? (
        <>
          <p className="form-error" role="alert">
            {error}
          </p>
          <p>
            <Link href="/signup">Sign up again</Link> or <Link href="/login">log in</Link>
          </p>
        </>
      ) : (
        <p role="status">Creating your account…</p>
      )}
    </Card>
  );
}
