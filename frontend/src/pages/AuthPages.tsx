import { useState, type FormEvent } from "react";
import { logIn, signUp } from "../api/endpoints";
import type { Session } from "../api/types";
import { Link } from "../components/Link";

export function AuthPage({ mode, onSession }: { mode: "login" | "signup"; onSession: (s: Session) => void }) {
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
      onSession(mode === "login" ? await logIn(email, password) : await signUp(email, password, org));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const signup = mode === "signup";
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
