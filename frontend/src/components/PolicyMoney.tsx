// The policy comparison in money: at the cluster's target, the memory each policy needs and what
// it saves against LRU; at the compared memory, what each policy's misses cost a month. Every
// figure is the API's (GET /simulations/{id}/cost, hitcurve/cost/policies.py).
import { getPolicyCost, type PolicyCostAnswer } from "../api/endpoints";
import { useAsync } from "../hooks";
import { formatBytes, formatHitRate, formatMoney, formatMoneyDelta } from "../lib/format";
import { Fetched } from "./States";
import { TableScroll } from "./TableScroll";

export function PolicyMoney({ runId, at, label }: { runId: string; at: number; label: (p: string) => string }) {
  const cost = useAsync((signal) => getPolicyCost(runId, at, signal), [runId, at]);
  return (
    <div data-testid="policy-money">
      <h3>In money</h3>
      <Fetched result={cost} what="the policies' cost">
        {(a) => <MoneyTable a={a} label={label} />}
      </Fetched>
    </div>
  );
}

/** The API's words with each policy's name as the page shows it ("nbq-clock" → "NbQ-CLOCK"). */
export function named(words: string, policies: string[], label: (p: string) => string): string {
  return policies.reduce((w, p) => w.replace(new RegExp(`(^|[\\s(])${p.replace(/[-]/g, "\\-")}(?=['\\s,;:)]|$)`, "g"), `$1${label(p)}`), words);
}

const money = (v: number | null | undefined) => (v == null ? "—" : formatMoney(v));
const saving = (v: number | null | undefined) => (v == null ? "" : formatMoneyDelta(-v));

function MoneyTable({ a, label }: { a: PolicyCostAnswer; label: (p: string) => string }) {
  const target = a.target_hit_ratio;
  return (
    <>
      <p data-testid="policy-money-message">{named(a.message, (a.rows ?? []).map((r) => r.policy), label)}</p>
      <TableScroll>
        <table data-testid="policy-money-table">
          <caption>
            {target != null ? `Memory for ${formatHitRate(target)} and, at ${formatBytes(a.memory_bytes)}, ` : `At ${formatBytes(a.memory_bytes)}, `}
            what the misses cost (per month; against LRU: − is cheaper)
          </caption>
          <thead>
            <tr>
              <th scope="col">Policy</th>
              {target != null && <th scope="col">Memory for the target</th>}
              {target != null && <th scope="col">Its price</th>}
              {target != null && <th scope="col">vs LRU</th>}
              <th scope="col">Misses cost</th>
              <th scope="col">vs LRU</th>
            </tr>
          </thead>
          <tbody>
            {(a.rows ?? []).map((r) => (
              <tr key={r.policy} data-policy={r.policy}>
                <th scope="row">{label(r.policy)}</th>
                {target != null && (
                  <td>
                    {r.memory_bytes_for_target != null
                      ? formatBytes(r.memory_bytes_for_target)
                      : r.memory_bytes_for_target_at_least != null
                        ? `more than ${formatBytes(r.memory_bytes_for_target_at_least)}`
                        : "—"}
                  </td>
                )}
                {target != null && <td>{money(r.memory_per_month_for_target)}</td>}
                {target != null && <td>{saving(r.memory_saving_per_month)}</td>}
                <td>{money(r.misses_per_month_at)}</td>
                <td>{saving(r.misses_saving_per_month)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </>
  );
}
