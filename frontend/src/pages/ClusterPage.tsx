import { listServers } from "../api/endpoints";
import { useState } from "react";
import { Breadcrumbs, SubjectTabs } from "../components/Bits";
import { ClusterSettingsPanel } from "../components/ClusterSettingsPanel";
import { CostView } from "../components/CostView";
import { ServerTable } from "../components/ServerTable";
import { Fetched } from "../components/States";
import { useAsync } from "../hooks";
import { CurvePage } from "./CurvePage";

export function ClusterPage({ id }: { id: string }) {
  const servers = useAsync((signal) => listServers(id, signal), [id]);
  // a saved target, price or node size changes the answers: the curve view is drawn anew
  const [version, setVersion] = useState(0);
  return (
    <div className="page">
      <Breadcrumbs items={[["Clusters", "/"], ["Cluster", null]]} />
      <SubjectTabs kind="cluster" id={id} />
      <CurvePage key={version} kind="cluster" id={id} />
      <CostView key={`cost-${version}`} kind="cluster" id={id} />
      <section aria-labelledby="cluster-servers">
        <h2 id="cluster-servers">Servers in this cluster</h2>
        <Fetched result={servers} what="servers">
          {(list) =>
            list.length ? <ServerTable servers={list} /> : <p className="state empty">No server is assigned to this cluster yet.</p>
          }
        </Fetched>
      </section>
      <ClusterSettingsPanel id={id} onChanged={() => setVersion((v) => v + 1)} />
    </div>
  );
}
