import { assignServer, listClusterRows, listServers } from "../api/endpoints";
import { useState, type FormEvent } from "react";
import { Breadcrumbs, SubjectTabs } from "../components/Bits";
import { ClusterSettingsPanel } from "../components/ClusterSettingsPanel";
import { CostView } from "../components/CostView";
import { ChoiceField } from "../components/Forms";
import { ServerTable } from "../components/ServerTable";
import { Fetched, FormNotes } from "../components/States";
import { useAsync } from "../hooks";
import { canWrite, useSession } from "../session";
import { CurvePage } from "./CurvePage";

export function ClusterPage({ id }: { id: string }) {
  // a saved target, price, node size or membership changes the answers: the curve view is drawn anew
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  return (
    <div className="page">
      <Breadcrumbs items={[["Clusters", "/"], ["Cluster", null]]} />
      <SubjectTabs kind="cluster" id={id} />
      <CurvePage key={version} kind="cluster" id={id} />
      <CostView key={`cost-${version}`} kind="cluster" id={id} />
      <ClusterMembers id={id} onChanged={changed} />
      <ClusterSettingsPanel id={id} onChanged={changed} />
    </div>
  );
}

/** The cluster's servers; members (writers) move one to another cluster or out of any with its
 * Cluster select, and add one of the organization's other servers. */
function ClusterMembers({ id, onChanged }: { id: string; onChanged: () => void }) {
  const data = useAsync(async (signal) => {
    // the members by the API's own filter; every server (at most the API's page of 500) to add from
    const [members, servers, clusters] = await Promise.all([
      listServers(id, signal),
      listServers(undefined, signal),
      listClusterRows(signal),
    ]);
    return { members, servers, clusters };
  }, [id]);
  const { session } = useSession();
  const writer = canWrite(session);
  const [adding, setAdding] = useState("");
  const [ok, setOk] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const assign = async (serverId: string, clusterId: string | null, said: string) => {
    setOk(null);
    setError(null);
    try {
      await assignServer(serverId, clusterId);
      setOk(said);
      setAdding("");
      data.reload();
      onChanged();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <section aria-labelledby="cluster-servers" data-testid="cluster-members">
      <h2 id="cluster-servers">Servers in this cluster</h2>
      <Fetched result={data} what="servers">
        {({ members, servers, clusters }) => {
          const others = servers.filter((s) => s.clusterId !== id);
          const name = (clusterId: string | null) => clusters.find((c) => c.id === clusterId)?.name;
          const add = (e: FormEvent) => {
            e.preventDefault();
            const s = others.find((x) => x.id === adding);
            if (s) void assign(s.id, id, `${s.address} added to this cluster.`);
          };
          return (
            <>
              {members.length ? (
                <ServerTable
                  servers={members}
                  clusters={writer ? clusters : undefined}
                  onAssign={
                    writer
                      ? (serverId, clusterId) => {
                          const s = members.find((x) => x.id === serverId);
                          const where = clusterId ? `moved to ${name(clusterId) ?? "another cluster"}` : "is in no cluster now";
                          void assign(serverId, clusterId, `${s?.address ?? "The server"} ${where}.`);
                        }
                      : undefined
                  }
                />
              ) : (
                <p className="state empty">No server is assigned to this cluster yet.</p>
              )}
              {writer && others.length > 0 && (
                <form className="row-form" onSubmit={add} aria-label="Add a server">
                  <ChoiceField
                    label="Add a server"
                    value={adding}
                    onChange={setAdding}
                    choices={others.map((s) => [s.id, s.clusterName ? `${s.address} (now in ${s.clusterName})` : s.address] as const)}
                    first={["", "choose…"]}
                    testId="cluster-add-server"
                    required
                  />
                  <button type="submit">Add to this cluster</button>
                </form>
              )}
              <FormNotes ok={ok} error={error} />
            </>
          );
        }}
      </Fetched>
    </section>
  );
}
