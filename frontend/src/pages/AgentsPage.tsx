import { useEffect, useRef, useState, type FormEvent } from "react";
import {
  assignServer,
  createKey,
  getAgentInstall,
  getAgentRelease,
  listClusters,
  listKeys,
  listServers,
  revokeKey,
  type InstallVariant,
} from "../api/endpoints";
import type { ClusterSummary, KeyInfo, KeyKind, NewKey, ServerSummary } from "../api/types";
import { CopyBlock } from "../components/Copy";
import { Link } from "../components/Link";
import { ActionsTable, ChoiceField } from "../components/Forms";
import { Fetched, FormNotes } from "../components/States";
import { useAsync } from "../hooks";
import { formatAge } from "../lib/format";
import { DEFAULT_MEMCACHED, sizingCurl, validMemcachedAddress } from "../lib/snippets";
import { canWrite, useSession } from "../session";

/** How often the page asks whether the new agent has uploaded. */
const POLL_MS = 3000;
/** The kinds of cache host an install block is written for (GET /agent-install's variants). */
const VARIANTS: ReadonlyArray<readonly [InstallVariant, string]> = [
  ["systemd", "Debian or Ubuntu with systemd"],
  ["no-systemd", "Debian or Ubuntu without systemd"],
  ["container", "Container sidecar (Docker)"],
  ["foreground", "Try it in the foreground (no install)"],
];
const SCOPES = [
  ["read", "read"],
  ["read_write", "read + start simulations"],
] as const;

export function AgentsPage() {
  // The newest secret of each kind: creating an API token keeps the agent key in the install
  // block (and the other way round).
  const [agentKey, setAgentKey] = useState<(NewKey & { at: number }) | null>(null);
  const [apiToken, setApiToken] = useState<NewKey | null>(null);
  const [shown, setShown] = useState<NewKey | null>(null);
  const [memcached, setMemcached] = useState(DEFAULT_MEMCACHED);
  const [variant, setVariant] = useState<InstallVariant>("systemd");
  const origin = window.location.origin;
  const valid = validMemcachedAddress(memcached);
  const address = valid ? memcached.trim() : DEFAULT_MEMCACHED;
  const ids = useAsync(async (signal) => {
    const [clusters, servers] = await Promise.all([listClusters(signal), listServers(undefined, signal)]);
    return { clusterId: clusters[0]?.id ?? null, serverId: servers[0]?.id ?? null };
  }, []);
  const created = (k: NewKey) => {
    setShown(k);
    if (k.kind === "agent") setAgentKey({ ...k, at: Date.now() });
    else setApiToken(k);
  };
  return (
    <div className="page agents-page">
      <header className="view-head">
        <h1>Agents & keys</h1>
        <p className="muted">Agent keys only upload; API tokens let autoscalers and Prometheus read answers. Each secret is shown once.</p>
      </header>
      {shown && <FreshKey k={shown} onClose={() => setShown(null)} />}
      <KeySection kind="agent" title="Agent keys" onCreated={created} />
      <section aria-labelledby="install-title">
        <h2 id="install-title">Install an agent</h2>
        <p>
          Beside each memcached server: create an agent key above, pick the kind of host, give the memcached address the agent should
          watch, and paste the block on that host. It downloads the agent from this Hitcurve, checks it against its SHA-256, installs
          it, writes its configuration and key, and starts it.
        </p>
        <div className="row-form">
          <ChoiceField label="Kind of host" value={variant} onChange={(v) => setVariant(v as InstallVariant)} choices={VARIANTS} testId="install-variant" />
          <label className="field">
            memcached address (host:port or socket path)
            <input
              value={memcached}
              onChange={(e) => setMemcached(e.target.value)}
              aria-invalid={!valid}
              aria-describedby="memcached-help"
              spellCheck={false}
              data-testid="memcached-address"
            />
          </label>
        </div>
        <p id="memcached-help" className={valid ? "muted" : "form-error"} role={valid ? undefined : "alert"}>
          {valid
            ? "The address as the agent reaches it; the server is registered under it, so use one per memcached (not 127.0.0.1 on every host)."
            : `“${memcached}” is not host:port or a socket path; the block below keeps ${DEFAULT_MEMCACHED}.`}
        </p>
        <InstallBlock variant={variant} memcached={address} agentKey={agentKey?.secret ?? null} />
        {agentKey && <FirstUpload address={address} since={agentKey.at} />}
      </section>
      <KeySection kind="api" title="API tokens" onCreated={created} />
      <section aria-labelledby="api-title">
        <h2 id="api-title">Ask the sizing API</h2>
        <p>
          Every endpoint, with its parameters and answers: <a href="/api/v1/docs">API reference (Swagger UI)</a> or{" "}
          <a href="/api/v1/redoc">ReDoc</a>. Prometheus scrapes <code>/metrics</code> with a read token.
        </p>
        <CopyBlock
          label="sizing request"
          testId="sizing-curl"
          text={sizingCurl(origin, apiToken?.secret ?? null, ids.state === "ready" ? ids.data : {})}
        />
      </section>
    </div>
  );
}

/**
 * After an agent key is created: "waiting for the first upload from …" until a server with that
 * address uploads, then "reporting" with a way to put it into a cluster.
 */
function FirstUpload({ address, since }: { address: string; since: number }) {
  const [server, setServer] = useState<ServerSummary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const startedAt = useRef(since);
  useEffect(() => {
    setServer(null);
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ctl = new AbortController();
    const poll = async () => {
      try {
        const found = (await listServers(undefined, ctl.signal)).find(
          // A snapshot after the key was made (a minute of slack for clocks): this agent, not an old one.
          (s) => s.address === address && s.lastSeen !== null && Date.parse(s.lastSeen) > startedAt.current - 60_000,
        );
        if (found) {
          setServer(found);
          return;
        }
        setError(null);
      } catch (e) {
        if (!ctl.signal.aborted) setError(e instanceof Error ? e.message : String(e));
      }
      if (!stop) timer = setTimeout(poll, POLL_MS);
    };
    void poll();
    return () => {
      stop = true;
      ctl.abort();
      clearTimeout(timer);
    };
  }, [address]);
  if (!server) {
    return (
      <div className="card onboarding" role="status" data-testid="onboarding">
        <p>
          <span className="spinner" aria-hidden="true" /> Waiting for the first upload from <code>{address}</code>… The agent sends one
          after its first window (60 s).
        </p>
        {error && <p className="form-error">Could not ask the server list: {error}</p>}
      </div>
    );
  }
  return <Reporting server={server} />;
}

function Reporting({ server }: { server: ServerSummary }) {
  const clusters = useAsync((signal) => listClusters(signal), []);
  const { session } = useSession();
  const [choice, setChoice] = useState("");
  const [assigned, setAssigned] = useState<string | null>(server.clusterName);
  const [error, setError] = useState<string | null>(null);
  const assign = async (e: FormEvent, list: ClusterSummary[]) => {
    e.preventDefault();
    try {
      await assignServer(server.id, choice);
      setAssigned(list.find((c) => c.id === choice)?.name ?? null);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <div className="card onboarding ok" role="status" data-testid="onboarding">
      <p>
        <code>{server.address}</code> is reporting
        {assigned ? (
          <>
            {" "}
            — in cluster <strong>{assigned}</strong>.
          </>
        ) : (
          " — assign it to a cluster to size it with the others."
        )}{" "}
        <Link href={`/servers/${server.id}`}>Open the server</Link>
      </p>
      {!assigned && canWrite(session) && (
        <Fetched result={clusters} what="clusters">
          {(list) =>
            list.length === 0 ? (
              <p className="muted">
                No cluster yet: create one on the <Link href="/">Clusters</Link> page.
              </p>
            ) : (
              <form className="row-form" onSubmit={(e) => assign(e, list)}>
                <ChoiceField
                  label="Cluster"
                  value={choice}
                  onChange={setChoice}
                  choices={list.map((c) => [c.id, c.name] as const)}
                  first={["", "choose…"]}
                  required
                />
                <button type="submit" className="primary">
                  Assign
                </button>
              </form>
            )
          }
        </Fetched>
      )}
      <FormNotes ok={null} error={error} />
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
            <ChoiceField label="Scope" value={scope} onChange={setScope} choices={SCOPES} />
          )}
          <button type="submit" className="primary" data-testid={`create-${kind}`}>
            Create {kind === "agent" ? "agent key" : "API token"}
          </button>
        </form>
      )}
      <FormNotes ok={null} error={error} />
      <Fetched result={keys} what={title.toLowerCase()}>
        {(list) =>
          list.length === 0 ? (
            <p className="muted">None yet.</p>
          ) : (
            <ActionsTable
              className="keys-table"
              testId={`${kind}-keys-table`}
              columns={["Name", "Key", ["Scope", "col-optional"], ["Created", "col-optional"], "Last used"]}
            >
                  {list.map((k) => (
                    <tr key={k.id} className={k.revokedAt ? "revoked" : undefined}>
                      <td>{k.name}</td>
                      <td>
                        <code>{k.prefix ?? ""}…</code>
                      </td>
                      <td className="col-optional">{k.scope}</td>
                      <td className="col-optional">{formatAge(k.createdAt)}</td>
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
            </ActionsTable>
          )
        }
      </Fetched>
    </section>
  );
}

/** The install block of the chosen kind of host, from the API, with the new agent key in place of
 * its placeholder; and the release it downloads. */
function InstallBlock({ variant, memcached, agentKey }: { variant: InstallVariant; memcached: string; agentKey: string | null }) {
  const block = useAsync((signal) => getAgentInstall(variant, memcached, signal), [variant, memcached]);
  const release = useAsync((signal) => getAgentRelease(signal), []);
  return (
    <Fetched result={block} what="install block">
      {(b) => {
        const key = agentKey ?? `${b.key_placeholder}`;
        const text = b.text.split(b.key_placeholder).join(key);
        return (
          <>
            <p className="muted small" data-testid="install-needs">
              Needs: {b.needs}.{agentKey ? "" : " Create an agent key above: it takes the place of hca_… in the block."}
            </p>
            <CopyBlock label="install commands" testId="install-block" text={text} />
            {release.state === "ready" && release.data.available && (
              <p className="muted small" data-testid="agent-release">
                Agent {release.data.version}:{" "}
                {release.data.files.map((f, i) => (
                  <span key={f.name}>
                    {i > 0 && " · "}
                    <a href={f.url}>{f.name}</a> <span className="wrap-anywhere">(SHA-256 {f.sha256.slice(0, 12)}…)</span>
                  </span>
                ))}
                {release.data.sha256sums_url && (
                  <>
                    {" "}
                    · <a href={release.data.sha256sums_url}>SHA256SUMS</a>
                  </>
                )}
              </p>
            )}
          </>
        );
      }}
    </Fetched>
  );
}
