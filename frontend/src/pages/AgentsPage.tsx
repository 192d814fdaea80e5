import { useState, type FormEvent } from "react";
import { createKey, listKeys, revokeKey } from "../api/endpoints";
import type { KeyInfo, KeyKind, NewKey } from "../api/types";
import { CopyBlock } from "../components/Copy";
import { Fetched } from "../components/States";
import { useAsync } from "../hooks";
import { formatAge } from "../lib/format";
import { agentConfig, agentInstall, sizingCurl } from "../lib/snippets";
import { canWrite, useSession } from "../session";

export function AgentsPage() {
  const [fresh, setFresh] = useState<NewKey | null>(null);
  const origin = window.location.origin;
  return (
    <div className="page">
      <header className="view-head">
        <h1>Agents & keys</h1>
        <p className="muted">Agent keys only upload; API tokens let autoscalers read answers. Each secret is shown once.</p>
      </header>
      {fresh && <FreshKey k={fresh} onClose={() => setFresh(null)} />}
      <KeySection kind="agent" title="Agent keys" onCreated={setFresh} />
      <section aria-labelledby="install-title">
        <h2 id="install-title">Install an agent</h2>
        <p>Beside each memcached server, build the agent, give it a key and point it at this service:</p>
        <CopyBlock label="install commands" text={agentInstall(fresh?.kind === "agent" ? fresh.secret : null)} />
        <CopyBlock label="agent configuration" text={agentConfig(origin)} />
      </section>
      <KeySection kind="api" title="API tokens" onCreated={setFresh} />
      <section aria-labelledby="api-title">
        <h2 id="api-title">Ask the sizing API</h2>
        <CopyBlock label="sizing request" text={sizingCurl(origin, fresh?.kind === "api" ? fresh.secret : null)} />
      </section>
    </div>
  );
}

function FreshKey({ k, onClose }: { k: NewKey; onClose: () => void }) {
  return (
    <div className="card fresh-key" role="status">
      <h2>
        {k.kind === "agent" ? "Agent key" : "API token"} “{k.name}” created
      </h2>
      <p>
        <strong>Copy it now: it is shown only this once.</strong> We store only its hash.
      </p>
      <CopyBlock label="new secret" text={k.secret} testId="new-secret" />
      <button type="button" onClick={onClose}>
        I have stored it
      </button>
    </div>
  );
}

function KeySection({ kind, title, onCreated }: { kind: KeyKind; title: string; onCreated: (k: NewKey) => void }) {
  const keys = useAsync((signal) => listKeys(kind, signal), [kind]);
  const { session } = useSession();
  const writable = canWrite(session);
  const [name, setName] = useState("");
  const [scope, setScope] = useState("read");
  const [error, setError] = useState<string | null>(null);
  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const k = await createKey(kind, name, scope);
      setName("");
      onCreated(k);
      keys.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const revoke = async (k: KeyInfo) => {
    if (!window.confirm(`Revoke “${k.name}”? Whatever uses it stops working at once.`)) return;
    try {
      await revokeKey(kind, k.id);
      keys.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <section aria-labelledby={`${kind}-keys`}>
      <h2 id={`${kind}-keys`}>{title}</h2>
      {writable && (
        <form className="row-form" onSubmit={create}>
          <label>
            Name
            <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} placeholder={kind === "agent" ? "cache-07" : "autoscaler"} />
          </label>
          {kind === "api" && (
            <label>
              Scope
              <select value={scope} onChange={(e) => setScope(e.target.value)}>
                <option value="read">read</option>
                <option value="read_write">read + start simulations</option>
              </select>
            </label>
          )}
          <button type="submit" className="primary" data-testid={`create-${kind}`}>
            Create {kind === "agent" ? "agent key" : "API token"}
          </button>
        </form>
      )}
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <Fetched result={keys} what={title.toLowerCase()}>
        {(list) =>
          list.length === 0 ? (
            <p className="muted">None yet.</p>
          ) : (
            <div className="table-wrap">
              <table data-testid={`${kind}-keys-table`}>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Key</th>
                    <th scope="col">Scope</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((k) => (
                    <tr key={k.id} className={k.revokedAt ? "revoked" : undefined}>
                      <td>{k.name}</td>
                      <td>
                        <code>{k.prefix ?? ""}…</code>
                      </td>
                      <td>{k.scope}</td>
                      <td>{formatAge(k.createdAt)}</td>
                      <td>{formatAge(k.lastUsedAt)}</td>
                      <td>
                        {k.revokedAt ? (
                          <span className="muted">revoked {formatAge(k.revokedAt)}</span>
                        ) : writable ? (
                          <button type="button" className="danger" onClick={() => revoke(k)}>
                            Revoke
                          </button>
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Fetched>
    </section>
  );
}
