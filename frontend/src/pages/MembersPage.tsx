// Members of the current organization. Owners invite by e-mail with a role (the invited person
// accepts from the mailed link: nobody is added without consent), see the pending invitations and
// withdraw them. Everyone sees who belongs to the organization.
import { useState, type FormEvent } from "react";
import { invite, listInvitations, listMembers, revokeInvitation } from "../api/endpoints";
import type { Role } from "../api/types";
import { ActionsTable, ChoiceField } from "../components/Forms";
import { Fetched, FormNotes } from "../components/States";
import { useAsync } from "../hooks";
import { formatAge, formatTime } from "../lib/format";
import { useSession } from "../session";
import { TableScroll } from "../components/TableScroll";

const ROLES: Array<[Role, string]> = [
  ["viewer", "viewer (reads)"],
  ["member", "member (reads and changes)"],
  ["owner", "owner (also manages members)"],
];

export function MembersPage() {
  const { session } = useSession();
  const owner = session.orgs.find((o) => o.id === session.currentOrgId)?.role === "owner";
  const data = useAsync(async (signal) => {
    const [members, invitations] = await Promise.all([listMembers(signal), owner ? listInvitations(signal) : Promise.resolve([])]);
    return { members, invitations };
  }, [owner]);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setSent(null);
    setBusy(true);
    try {
      const inv = await invite(email.trim(), role);
      setSent(`Invitation sent to ${inv.email} as ${inv.role}. They join once they accept it from the e-mail.`);
      setEmail("");
      data.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (id: string) => {
    setError(null);
    setSent(null);
    try {
      await revokeInvitation(id);
      data.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const orgName = session.orgs.find((o) => o.id === session.currentOrgId)?.name ?? "this organization";
  return (
    <div className="page members-page">
      <header className="view-head">
        <h1>Members</h1>
        <p className="muted">
          Who can see and change {orgName}.{" "}
          {owner ? "Invite people by e-mail: they join when they accept the invitation." : "Owners invite new members."}
        </p>
      </header>
      {owner && (
        <section aria-labelledby="invite-title">
          <h2 id="invite-title">Invite someone</h2>
          <form className="row-form" onSubmit={submit}>
            <label>
              E-mail
              <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required autoComplete="off" />
            </label>
            <ChoiceField label="Role" value={role} onChange={(r) => setRole(r as Role)} choices={ROLES} />
            <button type="submit" className="primary" disabled={busy}>
              {busy ? "…" : "Send invitation"}
            </button>
          </form>
        </section>
      )}
      <FormNotes ok={sent} error={error} />
      <Fetched result={data} what="members">
        {({ members, invitations }) => (
          <>
            {owner && (
              <section aria-labelledby="pending-title">
                <h2 id="pending-title">Pending invitations</h2>
                {invitations.length === 0 ? (
                  <p className="state empty">No pending invitations.</p>
                ) : (
                  <ActionsTable testId="invitations" columns={["E-mail", "Role", "Sent", "Expires"]}>
                        {invitations.map((i) => (
                          <tr key={i.id}>
                            <td className="wrap-anywhere">{i.email}</td>
                            <td>{i.role}</td>
                            <td>{formatAge(i.createdAt)}</td>
                            <td>{formatTime(new Date(i.expiresAt))}</td>
                            <td>
                              <button type="button" className="danger" onClick={() => revoke(i.id)} aria-label={`Revoke the invitation of ${i.email}`}>
                                Revoke
                              </button>
                            </td>
                          </tr>
                        ))}
                  </ActionsTable>
                )}
              </section>
            )}
            <section aria-labelledby="members-title">
              <h2 id="members-title">Members</h2>
              <TableScroll>
                <table data-testid="members">
                  <thead>
                    <tr>
                      <th scope="col">E-mail</th>
                      <th scope="col">Name</th>
                      <th scope="col">Role</th>
                      <th scope="col">Member since</th>
                    </tr>
                  </thead>
                  <tbody>
                    {members.map((m) => (
                      <tr key={m.userId}>
                        <td className="wrap-anywhere">{m.email}</td>
                        <td>{m.name ?? "—"}</td>
                        <td>{m.role}</td>
                        <td>{formatAge(m.since)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            </section>
          </>
        )}
      </Fetched>
    </div>
  );
}
