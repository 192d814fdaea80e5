// A cluster's own settings on its page: the target hit rate, the memory price, the miss cost (and
// per prefix where prefixes differ), the node size (the "how many nodes" answer needs it) and the
// name, editable by members; and deleting the cluster, which leaves its servers unassigned with
// their curves.
import { useState, type FormEvent } from "react";
import { deleteCluster, getClusterSettings, updateCluster, type ClusterSettings } from "../api/endpoints";
import { useAsync } from "../hooks";
import { formatBytes, formatHitRate, formatMoney } from "../lib/format";
import { navigate } from "../router";
import { canWrite, useSession } from "../session";
import { Fetched } from "./States";

const MIB = 1024 * 1024;

/** "prefix = cost" lines (one a line, blank lines skipped) to the API's {prefix: cost}; the API
 * checks names and limits, this only reads the lines and says which one it cannot read. */
export function parsePrefixCosts(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "") return;
    const at = line.lastIndexOf("=");
    const name = at < 0 ? "" : line.slice(0, at).trim();
    const cost = at < 0 ? NaN : Number(line.slice(at + 1).trim());
    if (name === "" || line.slice(at + 1).trim() === "" || !Number.isFinite(cost)) {
      throw new Error(`line ${i + 1} (“${line}”): write a prefix, “=”, and what a million of its misses cost, e.g. “page = 40”`);
    }
    out[name] = cost;
  });
  return out;
}

const prefixCostsText = (costs: Record<string, number>) =>
  Object.entries(costs)
    .map(([name, cost]) => `${name} = ${cost}`)
    .join("\n");
/** Node sizes are entered in MiB or GiB; what is stored is bytes. */
const NODE_UNITS = [
  ["MiB", MIB],
  ["GiB", 1024 * MIB],
] as const;

export function ClusterSettingsPanel({ id, onChanged }: { id: string; onChanged?: () => void }) {
  const settings = useAsync((signal) => getClusterSettings(id, signal), [id]);
  const { session } = useSession();
  const [editing, setEditing] = useState(false);
  return (
    <section aria-labelledby="cluster-settings" className="card" data-testid="cluster-settings">
      <h2 id="cluster-settings">Cluster settings</h2>
      <Fetched result={settings} what="cluster settings">
        {(c) =>
          editing ? (
            <SettingsForm
              cluster={c}
              onCancel={() => setEditing(false)}
              onSaved={() => {
                setEditing(false);
                settings.reload();
                onChanged?.();
              }}
            />
          ) : (
            <>
              <dl className="kv">
                <div>
                  <dt>Name</dt>
                  <dd data-testid="cluster-name">{c.name}</dd>
                </div>
                <div>
                  <dt>Target hit rate</dt>
                  <dd data-testid="cluster-target">{formatHitRate(c.targetHitRatio)}</dd>
                </div>
                <div>
                  <dt>Memory price</dt>
                  <dd data-testid="cluster-price">{formatMoney(c.pricePerGbMonth)} per GB-month</dd>
                </div>
                <div>
                  <dt>Miss cost</dt>
                  <dd data-testid="cluster-miss-cost">
                    {c.missCostSource === "measured"
                      ? c.cpuPricePerHour === null
                        ? <span className="muted">measured refill time, no CPU-hour price set</span>
                        : `measured refill time at ${formatMoney(c.cpuPricePerHour)} per CPU-hour`
                      : c.missCostPerMillion === null
                        ? <span className="muted">not set: no cost-optimal size</span>
                        : `${formatMoney(c.missCostPerMillion)} per million misses`}
                  </dd>
                </div>
                <div>
                  <dt>Miss cost per prefix</dt>
                  <dd data-testid="cluster-prefix-costs">
                    {Object.keys(c.prefixMissCosts).length === 0 ? (
                      <span className="muted">none: every miss at the miss cost above</span>
                    ) : (
                      Object.entries(c.prefixMissCosts)
                        .map(([name, cost]) => `${name}: ${formatMoney(cost)}`)
                        .join(", ") + " per million misses"
                    )}
                  </dd>
                </div>
                <div>
                  <dt>Node size</dt>
                  <dd data-testid="cluster-node-size">
                    {c.nodeSizeBytes === null ? <span className="muted">not set: answers count memory, not nodes</span> : formatBytes(c.nodeSizeBytes)}
                  </dd>
                </div>
              </dl>
              {canWrite(session) && (
                <div className="row">
                  <button type="button" onClick={() => setEditing(true)}>
                    Edit settings
                  </button>
                  <DeleteCluster cluster={c} />
                </div>
              )}
            </>
          )
        }
      </Fetched>
    </section>
  );
}

function SettingsForm({ cluster, onCancel, onSaved }: { cluster: ClusterSettings; onCancel: () => void; onSaved: () => void }) {
  const startUnit = cluster.nodeSizeBytes !== null && cluster.nodeSizeBytes % NODE_UNITS[1][1] === 0 ? 1 : 0;
  const [name, setName] = useState(cluster.name);
  const [target, setTarget] = useState(String(Math.round(cluster.targetHitRatio * 1000) / 10));
  const [price, setPrice] = useState(String(cluster.pricePerGbMonth));
  const [unit, setUnit] = useState(startUnit);
  const [node, setNode] = useState(cluster.nodeSizeBytes === null ? "" : String(cluster.nodeSizeBytes / NODE_UNITS[startUnit][1]));
  const [source, setSource] = useState<"entered" | "measured">(cluster.missCostSource);
  const [miss, setMiss] = useState(cluster.missCostPerMillion === null ? "" : String(cluster.missCostPerMillion));
  const [cpu, setCpu] = useState(cluster.cpuPricePerHour === null ? "" : String(cluster.cpuPricePerHour));
  const [perPrefix, setPerPrefix] = useState(prefixCostsText(cluster.prefixMissCosts));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const prefixCosts = parsePrefixCosts(perPrefix);
      await updateCluster(cluster.id, {
        name,
        target_hit_ratio: Number(target) / 100,
        price_per_gb_month: Number(price),
        node_size_bytes: node.trim() === "" ? null : Math.round(Number(node) * NODE_UNITS[unit][1]),
        miss_cost_source: source,
        miss_cost_per_million: miss.trim() === "" ? null : Number(miss),
        cpu_price_per_hour: cpu.trim() === "" ? null : Number(cpu),
        prefix_miss_costs: Object.keys(prefixCosts).length === 0 ? null : prefixCosts,
      });
      onSaved();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="inline-form" onSubmit={submit} data-testid="cluster-settings-form">
      <label>
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
      </label>
      <label>
        Target hit rate (%)
        <input type="number" min={1} max={99.9} step={0.1} value={target} onChange={(e) => setTarget(e.target.value)} required />
      </label>
      <label>
        Price per GB-month ($)
        <input type="number" min={0} step={0.01} value={price} onChange={(e) => setPrice(e.target.value)} required />
      </label>
      <label>
        Miss cost
        <select value={source} onChange={(e) => setSource(e.target.value === "measured" ? "measured" : "entered")} aria-label="Miss cost source">
          <option value="entered">entered: per million misses</option>
          <option value="measured">measured: the agents' refill time at a CPU-hour price</option>
        </select>
      </label>
      <label>
        Per million misses ($, empty: not set)
        <input type="number" min={0} step="any" value={miss} onChange={(e) => setMiss(e.target.value)} aria-label="Miss cost per million" />
      </label>
      <label>
        CPU-hour price ($, empty: not set)
        <input type="number" min={0} step="any" value={cpu} onChange={(e) => setCpu(e.target.value)} aria-label="CPU-hour price" />
      </label>
      <label>
        Miss cost per prefix ($ per million, one “prefix = cost” a line; the rest at the miss cost)
        <textarea rows={3} value={perPrefix} onChange={(e) => setPerPrefix(e.target.value)} aria-label="Miss cost per prefix" placeholder="page = 40" spellCheck={false} />
      </label>
      <label>
        Node size (empty: not set)
        <span className="row">
          <input type="number" min={1} step="any" value={node} onChange={(e) => setNode(e.target.value)} aria-label="Node size" />
          <select value={unit} onChange={(e) => setUnit(Number(e.target.value))} aria-label="Node size unit">
            {NODE_UNITS.map(([label], i) => (
              <option key={label} value={i}>
                {label}
              </option>
            ))}
          </select>
        </span>
      </label>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          Save
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function DeleteCluster({ cluster }: { cluster: ClusterSettings }) {
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    const servers = cluster.serverCount === 1 ? "its server stays, unassigned" : `its ${cluster.serverCount} servers stay, unassigned`;
    if (!window.confirm(`Delete the cluster “${cluster.name}”? ${cluster.serverCount ? servers + ", with their curves" : "It has no servers"}; its open alerts resolve (the channels are told) and stay in the alert history.`)) return;
    try {
      await deleteCluster(cluster.id);
      navigate("/");
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <>
      <button type="button" className="danger" onClick={remove}>
        Delete cluster
      </button>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}
