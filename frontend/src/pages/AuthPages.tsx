import { useState, type FormEvent } from "react";
import { logIn, signUp } from "../api/endpoints";
import type { Session } from "../api/types";
import { Link } from "../components/Link";

/** Where to go after a sign-up is confirmed from the mail (e.g. back to an invitation): kept in
 * this browser, since the confirmation link opens a new page. Only paths of this site. */
const NEXT_KEY = "hitcurve_after_signup";
export function rememberNext(next: string | null) {
  if (next && next.startsWith("/") && !next.startsWith("//")) localStorage.setItem(NEXT_KEY, next);
  else localStorage.removeItem(NEXT_KEY);
}
export function takeNext(): string {
  const next = localStorage.getItem(NEXT_KEY);
  localStorage.removeItem(NEXT_KEY);
  return next && next.startsWith("/") && !next.startsWith("//") ? next : "/";
}

export function AuthPage({ mode, onSession, next }: { mode: "login" | "signup"; onSession: (s: Session) => void; next?: string | null }) {
  const [sent, setSent] = useState<string | null>(null);
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [org, setOrg] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (mode === "login") onSession(await logIn(email, password));
      else {
        rememberNext(next ?? null);
        // The same answer whether or not the address has an account: the mail says which.
        setSent(await signUp(email, password, org));
      }
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const signup = mode === "signup";
  if (sent)
    return (
      <main className="auth">
        <section className="card auth-card" aria-labelledby="auth-title">
          <p className="brand">
            <span className="logo" aria-hidden="true">
              ◜
            </span>{" "}
            Hitcurve
          </p>
          <h1 id="auth-title">Check your inbox</h1>
          <p role="status">
            We sent a message to <strong>{email}</strong>. Follow its link to confirm the address and finish creating your account; it
            works once, for 24 hours.
          </p>
          <p className="muted">
            Nothing arrived? Check the spam folder, or <Link href="/login">log in</Link> if you already have an account.
          </p>
        </section>
      </main>
    );
  return (
    <main className="auth">
      <form className="card auth-card" onSubmit={submit} aria-labelledby="auth-title">
        <p className="brand">
          <span className="logo" aria-hidden="true">
            ◜
          </span>{" "}
          Hitcurve
        </p>
        <h1 id="auth-title">{signup ? "Create your account" : "Log in"}</h1>
        {signup && (
          <label>
            Organization name
            <input value={org} onChange={(e) => setOrg(e.target.value)} required maxLength={200} autoComplete="organization" />
          </label>
        )}
        <label>
          E-mail
          <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required autoComplete="email" />
        </label>
        <label>
          Password
          <input
            type="password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
            minLength={signup ? 10 : undefined}
            autoComplete={signup ? "new-password" : "current-password"}
          />
          {signup && <span className="hint">At least 10 characters, not a common or easily guessed one.</span>}
        </label>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "…" : signup ? "Create account" : "Log in"}
        </button>
        <p className="muted">
          {signup ? (
            <>
              Already have an account? <Link href="/login">Log in</Link>
            </>
          ) : (
            <>
              <Link href="/forgot-password">Forgot your password?</Link>
              <br />
              New to Hitcurve? <Link href="/signup">Create an account</Link>
            </>
          )}
        </p>
      </form>
    </main>
  );
}
