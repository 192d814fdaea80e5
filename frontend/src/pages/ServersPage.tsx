import { useState } from "react";
import { assignServer, listClusterRows, listServers } from "../api/endpoints";
import { ServerTable } from "../components/ServerTable";
import { Fetched, NoAgentYet } from "../components/States";
import { useAsync } from "../hooks";
import { canWrite, useSession } from "../session";

export function ServersPage() {
  const data = useAsync(async (signal) => {
    const [servers, clusters] = await Promise.all([listServers(undefined, signal), listClusterRows(signal)]);
    return { servers, clusters };
  }, []);
  const { session } = useSession();
  const [error, setError] = useState<string | null>(null);
  const onAssign = async (serverId: string, clusterId: string | null) => {
    setError(null);
    try {
      await assignServer(serverId, clusterId);
      data.reload();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <div className="page">
      <header className="view-head">
        <h1>Servers</h1>
        <p className="muted">Every memcached server an agent has reported, with the agent's health.</p>
      </header>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <Fetched result={data} what="servers">
        {({ servers, clusters }) =>
          servers.length === 0 ? (
            <NoAgentYet />
          ) : (
            <ServerTable servers={servers} clusters={clusters} onAssign={canWrite(session) ? onAssign : undefined} />
          )
        }
      </Fetched>
    </div>
  );
}
