// The cost view beside the hit-rate curve: the cost answer's words, its chart (charts/costChart),
// the prefixes whose misses the cluster prices apart, the managed node types that hold the optimum, a serverless cache's maximum data storage for the
// target with its bill, and the catalogue's date and sources. Every number
// is the API's (GET /sizing/.../cost), the same answer the e-mail and /metrics give.
import { useLayoutEffect, useRef } from "react";
import { ApiError } from "../api/client";
import { getCost, type CostAnswer } from "../api/endpoints";
import { drawCostChart } from "../charts/costChart";
import { useAsync, useWidth } from "../hooks";
import { formatBytes, formatHitRate, formatMoney, formatPercent } from "../lib/format";
import { Fetched } from "./States";

/** A source page by its host and its page name (two pages of one host stay apart). */
function sourceLabel(u: string): string {
  const url = new URL(u);
  const page = url.pathname.split("/").filter(Boolean).pop() ?? "";
  return `${url.hostname}: ${page.replace(/\.html$/, "")}`;
}

export function CostView({ kind, id }: { kind: "server" | "cluster"; id: string }) {
  const cost = useAsync((signal) => getCost(kind, id, signal), [kind, id]);
  // 409: no curve yet; the curve view above already says what it waits for
  if (cost.state === "error" && cost.error instanceof ApiError && cost.error.status === 409) return null;
  return (
    <section aria-labelledby="cost-view" className="card" data-testid="cost-view">
      <h2 id="cost-view">Cost</h2>
      <Fetched result={cost} what="the cost answer">
        {(a) => <CostBody a={a} />}
      </Fetched>
    </section>
  );
}

function CostBody({ a }: { a: CostAnswer }) {
  const [box, width] = useWidth<HTMLDivElement>();
  const svg = useRef<SVGSVGElement>(null);
  const narrow = width < 520;
  useLayoutEffect(() => {
    if (!width || !svg.current || !a.points?.length) return;
    drawCostChart(
      svg.current,
      {
        points: a.points,
        optimalBytes: a.optimal_memory_bytes ?? null,
        bandMin: a.optimal_memory_bytes_min ?? null,
        bandMax: a.optimal_memory_bytes_max ?? null,
        today: a.today ?? null,
      },
      { width, height: narrow ? 240 : 320, margin: { top: 24, right: 24, bottom: 34, left: narrow ? 56 : 64 } },
    );
  }, [a, width, narrow]);
  return (
    <>
      <p data-testid="cost-message" data-status={a.status}>
        {a.message}
      </p>
      {a.status === "ok" && a.optimal && (
        <dl className="kv">
          <div>
            <dt>Cost-optimal memory</dt>
            <dd data-testid="cost-optimal">{formatBytes(a.optimal_memory_bytes ?? 0)}</dd>
          </div>
          <div>
            <dt>Total per month there</dt>
            <dd data-testid="cost-total">{formatMoney(a.optimal.total)}</dd>
          </div>
          <div>
            <dt>Saving against today</dt>
            <dd data-testid="cost-saving">{formatMoney(a.saving_per_month ?? 0)} per month</dd>
          </div>
        </dl>
      )}
      {!!a.prefix_costs?.length && (
        <div data-testid="cost-prefixes">
          <h3>Misses priced per prefix</h3>
          <ul>
            {a.prefix_costs.map((p) => (
              <li key={p.prefix}>
                {p.prefix}: {formatMoney(p.miss_cost_per_million)} per million misses, {formatPercent(p.read_share)} of the reads, hit
                rate {formatHitRate(p.hit_ratio)} {a.status === "ok" ? "at the optimum" : "at the least found"}
              </li>
            ))}
          </ul>
        </div>
      )}
      {!!a.points?.length && (
        <div ref={box} className="chart cost-chart">
          <svg ref={svg} data-testid="cost-chart" role="img" aria-label="Total cost per month versus memory: memory, misses and their sum" />
        </div>
      )}
      {a.serverless && (
        <div data-testid="cost-serverless" data-status={a.serverless.status}>
          <h3>Serverless instead</h3>
          <p>{a.serverless.message}</p>
          {a.serverless.data_storage_maximum_gb != null && (
            <dl className="kv">
              <div>
                <dt>Maximum data storage to allow</dt>
                <dd data-testid="serverless-max">{a.serverless.data_storage_maximum_gb} GB</dd>
              </div>
              {a.serverless.total_per_month != null && (
                <div>
                  <dt>Per month, full</dt>
                  <dd data-testid="serverless-total">{formatMoney(a.serverless.total_per_month)}</dd>
                </div>
              )}
            </dl>
          )}
        </div>
      )}
      {!!a.node_options?.length && (
        <div data-testid="cost-nodes">
          <h3>Managed node types for the optimum</h3>
          <ul>
            {a.node_options.map((o) => (
              <li key={o.name}>
                {o.count} × {o.name} ({formatBytes(o.memory_bytes)}){o.monthly !== null ? `, ${formatMoney(o.monthly)} per month` : ", no verified price"}
              </li>
            ))}
          </ul>
          <p className="muted">
            {a.cheapest_node ? `Cheapest: ${a.cheapest_node.count} × ${a.cheapest_node.name}.` : "No type in the catalogue has a verified price."}
          </p>
        </div>
      )}
      {(!!a.node_options?.length || a.serverless) && (
        <p className="muted" data-testid="cost-catalogue">
          Node and serverless catalogue of {a.catalogue_as_of}, from{" "}
          {a.catalogue_sources?.map((u, i) => (
            <span key={u}>
              {i ? ", " : ""}
              <a href={u}>{sourceLabel(u)}</a>
            </span>
          ))}
          .
        </p>
      )}
    </>
  );
}
