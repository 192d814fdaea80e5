import { listServers } from "../api/endpoints";
import { Breadcrumbs, SubjectTabs } from "../components/Bits";
import { ServerTable } from "../components/ServerTable";
import { Fetched } from "../components/States";
import { useAsync } from "../hooks";
import { CurvePage } from "./CurvePage";

export function ClusterPage({ id }: { id: string }) {
  const servers = useAsync((signal) => listServers(id, signal), [id]);
  return (
    <div className="page">
      <Breadcrumbs items={[["Clusters", "/"], ["Cluster", null]]} />
      <SubjectTabs kind="cluster" id={id} />
      <CurvePage kind="cluster" id={id} />
      <section aria-labelledby="cluster-servers">
        <h2 id="cluster-servers">Servers in this cluster</h2>
        <Fetched result={servers} what="servers">
          {(list) =>
            list.length ? <ServerTable servers={list} /> : <p className="state empty">No server is assigned to this cluster yet.</p>
          }
        </Fetched>
      </section>
    </div>
  );
}
