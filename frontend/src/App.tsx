import { useCallback, useEffect, useState, type ReactNode } from "react";
import { ApiError, onUnauthorized } from "./api/client";
import { fetchSession, logOut, switchOrg } from "./api/endpoints";
import type { Session } from "./api/types";
import { Link } from "./components/Link";
import { ErrorState, Loading } from "./components/States";
import { ConfirmReportPage, ConfirmSignupPage, ForgotPasswordPage, InvitePage, ResetPasswordPage, UnsubscribePage } from "./pages/AccountPages";
import { AgentsPage } from "./pages/AgentsPage";
import { AlertsPage } from "./pages/AlertsPage";
import { AuthPage } from "./pages/AuthPages";
import { ClusterPage } from "./pages/ClusterPage";
import { ClustersPage } from "./pages/ClustersPage";
import { HistoryPage } from "./pages/HistoryPage";
import { MembersPage } from "./pages/MembersPage";
import { PoliciesPage } from "./pages/PoliciesPage";
import { BreakdownPage } from "./pages/BreakdownPage";
import { ReportsPage } from "./pages/ReportsPage";
import { ServerPage } from "./pages/ServerPage";
import { ServersPage } from "./pages/ServersPage";
import { matchPath, navigate, queryParam, useLocation } from "./router";
import { SessionContext } from "./session";

type Boot = { state: "loading" } | { state: "anonymous" } | { state: "error"; error: Error } | { state: "in"; session: Session };

export function App() {
  const [boot, setBoot] = useState<Boot>({ state: "loading" });
  const [attempt, setAttempt] = useState(0);
  const location = useLocation();

  useEffect(() => {
    // A session set while this request was on its way (a mailed sign-up link confirmed meanwhile)
    // wins over its answer: a slow "not logged in" must not log the new user out again.
    const unlessIn = (next: Boot) => setBoot((prev) => (prev.state === "in" ? prev : next));
    fetchSession()
      .then((session) => setBoot({ state: "in", session }))
      .catch((e: unknown) => {
        if (e instanceof ApiError && (e.status === 401 || e.status === 403)) unlessIn({ state: "anonymous" });
        else unlessIn({ state: "error", error: e instanceof Error ? e : new Error(String(e)) });
      });
  }, [attempt]);
  useEffect(() => onUnauthorized(() => setBoot({ state: "anonymous" })), []);
  // A confirmed sign-up (the mailed link) logs in and goes on where the sign-up started.
  const confirmed = useCallback((session: Session, next: string) => {
    setBoot({ state: "in", session });
    navigate(next, true);
  }, []);

  // Links from account e-mails work logged in or not.
  const reset = matchPath("/reset-password/:token", location);
  if (reset) return <ResetPasswordPage token={reset.token} />;
  if (matchPath("/forgot-password", location)) return <ForgotPasswordPage />;
  const confirm = matchPath("/signup/confirm/:token", location);
  if (confirm) return <ConfirmSignupPage token={confirm.token} onSession={confirmed} />;
  const unsub = matchPath("/unsubscribe/:token", location);
  if (unsub) return <UnsubscribePage token={unsub.token} />;
  const recipient = matchPath("/reports/confirm/:token", location);
  if (recipient) return <ConfirmReportPage token={recipient.token} />;
  if (boot.state === "loading") return <Loading what="Hitcurve" />;
  const invite = matchPath("/invite/:token", location);
  if (invite && boot.state !== "error") {
    const joined = () => {
      navigate("/", true);
      setAttempt((a) => a + 1);
    };
    return <InvitePage token={invite.token} session={boot.state === "in" ? boot.session : null} onJoined={joined} />;
  }
  if (boot.state === "error")
    return (
      <main className="auth">
        <ErrorState error={boot.error} retry={() => setAttempt((a) => a + 1)} />
      </main>
    );
  if (boot.state === "anonymous") {
    const onSession = (session: Session) => {
      setBoot({ state: "in", session });
      // ?next= brings the user back (e.g. to an invitation); only paths of this site.
      const next = queryParam(location, "next");
      const safe = next && next.startsWith("/") && !next.startsWith("//") ? next : "/";
      if (location.startsWith("/login") || location.startsWith("/signup")) navigate(safe, true);
    };
    return <AuthPage mode={location.startsWith("/signup") ? "signup" : "login"} onSession={onSession} next={queryParam(location, "next")} />;
  }
  const setSession = (s: Session | null) => setBoot(s ? { state: "in", session: s } : { state: "anonymous" });
  return (
    <SessionContext.Provider value={{ session: boot.session, setSession }}>
      <Shell session={boot.session} setSession={setSession}>
        <Routes location={location} orgId={boot.session.currentOrgId ?? ""} />
      </Shell>
    </SessionContext.Provider>
  );
}

const NAV: Array<[string, string]> = [
  ["/", "Clusters"],
  ["/servers", "Servers"],
  ["/alerts", "Alerts"],
  ["/agents", "Agents & keys"],
  ["/reports", "Reports"],
  ["/members", "Members"],
];

function Shell({ session, setSession, children }: { session: Session; setSession: (s: Session | null) => void; children: ReactNode }) {
  const location = useLocation();
  const [menu, setMenu] = useState(false);
  const active = (href: string) => (href === "/" ? location === "/" || location.startsWith("/clusters") : location.startsWith(href));
  const onOrg = async (id: string) => {
    try {
      setSession(await switchOrg(id));
      navigate("/");
    } catch (e) {
      alert(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link href="/" className="brand">
          <span className="logo" aria-hidden="true">
            ◜
          </span>{" "}
          Hitcurve
        </Link>
        <button type="button" className="menu-toggle" aria-expanded={menu} aria-controls="nav" onClick={() => setMenu(!menu)}>
          Menu
        </button>
        <nav id="nav" className={menu ? "open" : undefined} aria-label="Main">
          {NAV.map(([href, label]) => (
            <Link key={href} href={href} aria-current={active(href) ? "page" : undefined} onClick={() => setMenu(false)}>
              {label}
            </Link>
          ))}
        </nav>
        <div className="account">
          <label className="org-switch">
            <span className="sr-only">Organization</span>
            <select value={session.currentOrgId ?? ""} onChange={(e) => onOrg(e.target.value)} data-testid="org-switch">
              {session.orgs.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name}
                  {o.role === "viewer" ? " (viewer)" : ""}
                </option>
              ))}
            </select>
          </label>
          <span className="user muted" title={session.user.email}>
            {session.user.email}
          </span>
          <button
            type="button"
            className="link"
            onClick={async () => {
              await logOut().catch(() => undefined);
              setSession(null);
              navigate("/login");
            }}
          >
            Log out
          </button>
        </div>
      </header>
      <main id="main" className="content">
        {children}
      </main>
    </div>
  );
}

/** Page for the path; keyed by organization and ids so a switch starts each page afresh. */
function Routes({ location, orgId }: { location: string; orgId: string }) {
  let m: Record<string, string> | null;
  const k = (s: string) => `${orgId}:${s}`;
  if (matchPath("/", location) || matchPath("/login", location) || matchPath("/signup", location)) return <ClustersPage key={k("c")} />;
  if ((m = matchPath("/clusters/:id", location))) return <ClusterPage key={k(m.id)} id={m.id} />;
  if ((m = matchPath("/clusters/:id/history", location))) return <HistoryPage key={k(m.id)} kind="cluster" id={m.id} />;
  if ((m = matchPath("/clusters/:id/policies", location))) return <PoliciesPage key={k(m.id)} kind="cluster" id={m.id} />;
  if (matchPath("/servers", location)) return <ServersPage key={k("s")} />;
  if ((m = matchPath("/servers/:id", location))) return <ServerPage key={k(m.id)} id={m.id} />;
  if ((m = matchPath("/servers/:id/history", location))) return <HistoryPage key={k(m.id)} kind="server" id={m.id} />;
  if ((m = matchPath("/servers/:id/policies", location))) return <PoliciesPage key={k(m.id)} kind="server" id={m.id} />;
  if ((m = matchPath("/servers/:id/breakdown", location))) return <BreakdownPage key={k(m.id)} id={m.id} />;
  if (matchPath("/alerts", location)) return <AlertsPage key={k("a")} />;
  if (matchPath("/agents", location)) return <AgentsPage key={k("k")} />;
  if (matchPath("/reports", location)) return <ReportsPage key={k("r")} />;
  if (matchPath("/members", location)) return <MembersPage key={k("m")} />;
  return (
    <div className="state empty">
      <h1>Page not found</h1>
      <p>
        <Link href="/">Back to the clusters</Link>
      </p>
    </div>
  );
}
