// Calls to /api/v1, each mapping the API's answer (typed by its OpenAPI document: ./call.ts) onto
// the view models in ./types.
import type { CurvePoint } from "../lib/curve";
import { monthlyCost } from "../lib/curve";
import { api, type Schemas as S } from "./call";
import { ApiError, forgetCsrfToken, readCsrfToken } from "./client";
import type {
  Alert, Breakdown, FlashTier, PoolSplit, SplitPoint, TtlWhatIf, ClusterSummary, CurveView, DataBasis, History, HistoryCurve, HotKeyRow, KeyInfo, KeyKind, NewKey, PageMove,
  ReportSubscription, Role, ServerSummary, Session, SimulationRun, Sizing, Status,
} from "./types";

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : v == null ? null : Number.isFinite(Number(v)) ? Number(v) : null);
const str = (v: unknown): string | null => (v == null ? null : String(v));
/** One of `allowed` as the API answered it, else `fallback` (the API's enums are plain strings). */
function oneOf<T extends string>(v: string | null | undefined, allowed: readonly T[], fallback: T): T {
  return (allowed as readonly string[]).includes(v ?? "") ? (v as T) : fallback;
}
/** `v` as one of `allowed` for a request, or an error naming what is accepted. */
function member<T extends string>(v: string, allowed: readonly T[], what: string): T {
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw new Error(`${what} must be one of ${allowed.join(", ")}, not "${v}"`);
}
const SEVERITIES = ["info", "warning", "critical"] as const;
const TOKEN_SCOPES = ["read", "read_write"] as const satisfies readonly S["ApiTokenIn"]["scope"][];

// --- session -------------------------------------------------------------------------------

function session(j: S["MeOut"]): Session {
  return {
    user: { id: String(j.user.id), email: j.user.email, name: j.user.display_name || null },
    orgs: (j.memberships ?? []).map((m) => ({ id: String(m.org_id), name: m.org_name, role: m.role })),
    currentOrgId: str(j.org_id),
  };
}

/**
 * The logged-in session. The session cookie is HttpOnly, but the backend sets and clears the
 * readable CSRF cookie with it (same lifetime): without that cookie there is no session, and the
 * probe is not sent (its 401 was a console error on every log-in page). A probe answered 401
 * anyway (the session ended on the server) forgets the cookie, so the next load does not ask.
 */
export const fetchSession = async (): Promise<Session> => {
  const token = readCsrfToken();
  if (!token) throw new ApiError(401, "Please log in.");
  try {
    return session(await api("get", "/auth/me", {}));
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) forgetCsrfToken(token);
    throw e;
  }
};
export const logIn = async (email: string, password: string): Promise<Session> =>
  session(await api("post", "/auth/login", { body: { email, password } }));
/** Starts a sign-up: the answer ("check your inbox") is the same whether or not the e-mail has an account. */
export const signUp = async (email: string, password: string, orgName: string): Promise<string> =>
  String((await api("post", "/auth/signup", { body: { email, password, org_name: orgName } })).detail);
/** The mailed confirmation link: creates the account and logs in. */
export const confirmSignup = async (token: string): Promise<Session> => session(await api("post", "/auth/signup/confirm", { body: { token } }));
export const logOut = () => api("post", "/auth/logout", {});
export const switchOrg = async (orgId: string): Promise<Session> => session(await api("post", "/auth/switch-org", { body: { org_id: orgId } }));

// --- inventory -----------------------------------------------------------------------------

const HOUR = 3600_000;

async function settle<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch {
    return null;
  }
}

/** Plain cluster rows (name, price, target): for pickers. */
const clusterRow = (c: S["ClusterOut"]) => ({
  id: String(c.id),
  name: String(c.name),
  targetHitRatio: num(c.target_hit_ratio),
  pricePerGbMonth: num(c.price_per_gb_month),
  serverCount: num(c.server_count) ?? 0,
  missCostPerMillion: num(c.miss_cost_per_million),
  cpuPricePerHour: num(c.cpu_price_per_hour),
  missCostSource: c.miss_cost_source === "measured" ? "measured" : "entered",
});
export const listClusterRows = async (signal?: AbortSignal) => (await api("get", "/clusters", { signal })).map(clusterRow);

/**
 * The overview's row per cluster: GET /clusters carries a summary of each cluster (latest curve's
 * memory and measured hit ratio, the sizing API's answer for its target, open alerts, status).
 */
export async function listClusters(signal?: AbortSignal): Promise<ClusterSummary[]> {
  const raw = await api("get", "/clusters", { signal });
  return raw.map((j) =>
    clusterSummary(clusterRow(j), {
      allocated: num(j.allocated_bytes),
      measured: num(j.measured_hit_ratio),
      needed: ["ok", null, undefined].includes(j.memory_for_target_status) ? num(j.memory_for_target_bytes) : null,
      unreachable: j.memory_for_target_status === "unreachable" || j.memory_for_target_status === "above_curve",
      status: (j.status ?? "no_data") as Status,
      openAlerts: num(j.open_alerts) ?? 0,
      targetAnswer: j.target_answer ? sizing(j.target_answer, num(j.target_hit_ratio) ?? 0, num(j.price_per_gb_month)) : null,
    }),
  );
}

function clusterSummary(
  c: ReturnType<typeof clusterRow>,
  f: {
    allocated: number | null;
    measured: number | null;
    needed: number | null;
    unreachable: boolean;
    status: Status;
    openAlerts: number;
    targetAnswer: Sizing | null;
  },
): ClusterSummary {
  const price = c.pricePerGbMonth;
  return {
    ...c,
    currency: "USD",
    allocatedBytes: f.allocated,
    measuredHitRatio: f.measured,
    neededBytes: f.needed,
    neededUnreachable: f.unreachable,
    monthlyCostNow: f.allocated !== null && price !== null ? monthlyCost(f.allocated, price) : null,
    monthlyCostAtTarget: f.needed !== null && price !== null ? monthlyCost(f.needed, price) : null,
    status: f.status,
    openAlerts: f.openAlerts,
    targetAnswer: f.targetAnswer,
  };
}

export const createCluster = (body: { name: string; target_hit_ratio: number; price_per_gb_month: number }) =>
  api("post", "/clusters", { body });

/** A cluster's own settings, as PATCH /clusters/{id} changes them. */
export interface ClusterSettings {
  id: string;
  name: string;
  targetHitRatio: number;
  pricePerGbMonth: number;
  nodeSizeBytes: number | null;
  serverCount: number;
  missCostPerMillion: number | null;
  cpuPricePerHour: number | null;
  missCostSource: "entered" | "measured";
  /** Prefixes whose misses cost apart: prefix → money per million misses (empty: none). */
  prefixMissCosts: Record<string, number>;
}
const clusterSettings = (c: S["ClusterOut"]): ClusterSettings => ({
  id: String(c.id),
  name: String(c.name),
  targetHitRatio: Number(c.target_hit_ratio),
  pricePerGbMonth: Number(c.price_per_gb_month),
  nodeSizeBytes: num(c.node_size_bytes),
  serverCount: num(c.server_count) ?? 0,
  missCostPerMillion: num(c.miss_cost_per_million),
  cpuPricePerHour: num(c.cpu_price_per_hour),
  missCostSource: c.miss_cost_source === "measured" ? "measured" : "entered",
  prefixMissCosts: c.prefix_miss_costs ?? {},
});
export const getClusterSettings = async (id: string, signal?: AbortSignal) => clusterSettings(await api("get", "/clusters/{cluster_id}", { path: { cluster_id: id }, signal }));
export const updateCluster = async (
  id: string,
  body: {
    name?: string;
    target_hit_ratio?: number;
    price_per_gb_month?: number;
    node_size_bytes?: number | null;
    miss_cost_per_million?: number | null;
    cpu_price_per_hour?: number | null;
    miss_cost_source?: "entered" | "measured";
    prefix_miss_costs?: Record<string, number> | null;
  },
) => clusterSettings(await api("patch", "/clusters/{cluster_id}", { path: { cluster_id: id }, body }));
/** The cost answer (GET /sizing/{servers|clusters}/{id}/cost) as the API gives it: the chart,
 * the words and the node counts read its fields, nothing is computed again here. */
export type CostAnswer = S["CostAnswer"];
export const getCost = (kind: "server" | "cluster", id: string, signal?: AbortSignal): Promise<CostAnswer> =>
  kind === "server"
    ? api("get", "/sizing/servers/{server_id}/cost", { path: { server_id: id }, signal })
    : api("get", "/sizing/clusters/{cluster_id}/cost", { path: { cluster_id: id }, signal });
/** Deletes the cluster; its servers stay, unassigned, with their curves. */
export const deleteCluster = (id: string) => api("delete", "/clusters/{cluster_id}", { path: { cluster_id: id } });

/** The API's data_basis; `fallback` when absent (older backends: everything came from watch). */
export function dataBasis<T extends DataBasis | null>(v: unknown, fallback: T): DataBasis | T {
  return v === "watch" || v === "stats_only" || v === "mixed" ? v : fallback;
}

function serverBase(s: S["ServerOut"], clusters: Map<string, string>): ServerSummary {
  const lastSeen: string | null = s.last_snapshot_at ?? s.last_seen_at ?? null;
  return {
    id: String(s.id),
    address: s.address,
    hostname: s.hostname ?? null,
    clusterId: str(s.cluster_id),
    clusterName: s.cluster_id ? (clusters.get(String(s.cluster_id)) ?? null) : null,
    version: s.version ?? null,
    agentVersion: s.agent_version ?? null,
    limitBytes: num(s.limit_maxbytes),
    lastSeen,
    // a stats-only agent reads no stream: there is no event loss to show
    lossRatio: s.data_basis === "stats_only" ? null : num(s.loss_ratio),
    lossWarning: s.loss_warning === true,
    curveError: num(s.curve_error_pp),
    curveErrorWarning: s.curve_error_warning === true,
    measuredHitRatio: num(s.measured_hit_ratio),
    status: (s.status ?? "no_data") as Status,
    statusNote: s.status_note ?? null,
    dataBasis: dataBasis(s.data_basis, null),
  };
}

/**
 * Servers with their agent's health, as GET /servers says: the latest measured hit rate and event
 * loss, the curve error (mean |predicted − measured| over a day, from the accuracy record), the
 * status and which figure is above its threshold (GET /thresholds).
 */
export async function listServers(clusterId?: string, signal?: AbortSignal): Promise<ServerSummary[]> {
  const [rows, clusters] = await Promise.all([
    api("get", "/servers", { query: { cluster_id: clusterId, limit: 500 }, signal }),
    listClusterRows(signal).catch(() => []),
  ]);
  const names = new Map(clusters.map((c) => [c.id, c.name]));
  return rows.map((row) => serverBase(row, names));
}

export const assignServer = (serverId: string, clusterId: string | null) =>
  api("patch", "/servers/{server_id}", { path: { server_id: serverId }, body: { cluster_id: clusterId } });

// --- curves and sizing -----------------------------------------------------------------------

/** Zip the API's parallel arrays into points; band arrays optional. */
export function zipCurve(xs: number[] | null | undefined, ys: number[] | null | undefined, lo?: number[] | null, hi?: number[] | null): CurvePoint[] {
  if (!xs || !ys) return [];
  const n = Math.min(xs.length, ys.length);
  const out: CurvePoint[] = [];
  for (let i = 0; i < n; i++) {
    const p: CurvePoint = { bytes: xs[i], hit: ys[i] };
    if (lo && hi && lo.length === n && hi.length === n) {
      p.lo = lo[i];
      p.hi = hi[i];
    }
    out.push(p);
  }
  return out;
}

/** A stored curve's page-move advice: a JSON object the worker writes (free-form in the API). */
type AdviceJson = { [key: string]: unknown } | null | undefined;
type MoveJson = { from_class?: unknown; to_class?: unknown; pages?: unknown; hit_gain?: unknown };

function advice(a: AdviceJson): { moves: PageMove[]; gain: number | null } {
  const moves: MoveJson[] = Array.isArray(a?.moves) ? a.moves : [];
  return {
    moves: moves.map((m) => ({ fromClass: Number(m.from_class), toClass: Number(m.to_class), pages: Number(m.pages), hitGain: num(m.hit_gain) })),
    // The worker writes the gain in percentage points (gain_pp); older rows carry a ratio.
    gain: a?.gain_pp != null ? (num(a.gain_pp) ?? 0) / 100 : num(a?.rebalance_gain ?? a?.gain ?? a?.hit_gain),
  };
}

export async function getServerCurve(id: string, signal?: AbortSignal): Promise<CurveView> {
  const j = await api("get", "/servers/{server_id}/curve", { path: { server_id: id }, signal });
  const m = j.merged;
  const server = j.server;
  const cluster = server.cluster_id ? await settle(api("get", "/clusters/{cluster_id}", { path: { cluster_id: server.cluster_id }, signal })) : null;
  const calibrated = m?.hit_ratio_calibrated ?? null;
  const adv = advice(m?.advice);
  return {
    kind: "server",
    id,
    name: server.hostname ? `${server.address} (${server.hostname})` : server.address,
    basis: calibrated ? "calibrated" : "estimate",
    computedAt: m?.computed_at ?? null,
    currentBytes: num(m?.current_bytes) ?? num(server.limit_maxbytes) ?? 0,
    measuredHitRatio: num(m?.measured_hit_ratio ?? j.latest_snapshot?.measured_hit_ratio),
    targetHitRatio: num(cluster?.target_hit_ratio),
    pricePerGbMonth: num(cluster?.price_per_gb_month),
    currency: "USD",
    clusterId: str(server.cluster_id),
    clusterName: cluster?.name ?? null,
    points: m ? zipCurve(m.sizes_bytes, calibrated ?? m.hit_ratio_proportional, m.band_low, m.band_high) : [],
    // a stats-only model is stored as both (it passes through the measured point): nothing to compare
    estimate: m && calibrated && m.data_basis !== "stats_only" ? zipCurve(m.sizes_bytes, m.hit_ratio_proportional) : null,
    classes: (j.classes ?? []).map((c) => ({
      id: c.class_id,
      chunkSize: c.chunk_size,
      pages: c.pages,
      requests: c.requests ?? 0,
      currentBytes: (c.current_items ?? 0) * c.chunk_size,
      points: zipCurve(c.sizes_bytes, c.hit_ratios),
    })),
    advice: adv.moves,
    adviceHitGain: adv.gain,
    lossRatio: num(j.latest_snapshot?.loss_ratio),
    observedMaxBytes: num(m?.observed_max_bytes),
    memcachedVersion: str(server.version),
    dataBasis: dataBasis(m?.data_basis ?? j.latest_snapshot?.data_basis, "watch"),
    windowsNote: str(m?.windows_note),
    flashTier: flashTier(j.flash_tier),
    serverCount: null,
  };
}

function flashTier(t: S["FlashTierOut"] | null | undefined): FlashTier | null {
  if (!t) return null;
  return {
    limitBytes: t.limit_bytes,
    bytesUsed: t.bytes_used,
    fillRatio: t.fill_ratio,
    headerItems: t.header_items,
    headerBytes: t.header_bytes,
    flashHitShare: num(t.flash_hit_share),
    flashMissShare: num(t.flash_miss_share),
    readsPerS: num(t.reads_per_s),
    readBytesPerS: num(t.read_bytes_per_s),
    writesPerS: num(t.writes_per_s),
    writeBytesPerS: num(t.write_bytes_per_s),
    windows: t.windows,
    note: t.note,
  };
}

export async function getClusterCurve(id: string, signal?: AbortSignal): Promise<CurveView> {
  const j = await api("get", "/clusters/{cluster_id}/curve", { path: { cluster_id: id }, signal });
  const c = j.cluster;
  return {
    kind: "cluster",
    id,
    name: c.name,
    basis: j.basis === "calibrated" ? "calibrated" : "estimate",
    computedAt: j.computed_at ?? null,
    currentBytes: num(j.current_bytes) ?? 0,
    measuredHitRatio: num(j.measured_hit_ratio),
    targetHitRatio: num(c.target_hit_ratio),
    pricePerGbMonth: num(c.price_per_gb_month),
    currency: "USD",
    clusterId: String(c.id),
    clusterName: c.name,
    points: zipCurve(j.sizes_bytes, j.hit_ratios, j.band_low, j.band_high),
    estimate: null,
    classes: [],
    advice: [],
    adviceHitGain: null,
    lossRatio: null,
    observedMaxBytes: null, // a cluster curve has no observed maximum of its own
    memcachedVersion: null,
    dataBasis: "watch", // the cluster's sizing answer says otherwise (Sizing.dataBasis)
    windowsNote: null,
    flashTier: null,
    serverCount: c.server_count ?? 0,
  };
}

/**
 * The sizing API's answer to "how much memory for `target`?" — the number the page states.
 * Cost is memory × the cluster's price per GiB-month (the API prices nothing itself).
 */
export async function getSizing(
  kind: "server" | "cluster",
  id: string,
  target: number,
  pricePerGbMonth: number | null,
  signal?: AbortSignal,
): Promise<Sizing> {
  const query = { target_hit_ratio: target };
  const j =
    kind === "server"
      ? await api("get", "/sizing/servers/{server_id}/memory", { path: { server_id: id }, query, signal })
      : await api("get", "/sizing/clusters/{cluster_id}/memory", { path: { cluster_id: id }, query, signal });
  return sizing(j, target, pricePerGbMonth);
}

const STATUSES = ["ok", "warming_up", "unknown", "above_curve", "unreachable"] as const;

/** The answer says nothing about memory yet (the API's hitcurve/knowledge.py states). */
export const isUnknown = (status: Sizing["status"]) => status === "warming_up" || status === "unknown";

/** The API's sizing status. */
function sizingStatus(j: S["SizingAnswer"]): Sizing["status"] {
  return (STATUSES as readonly string[]).includes(j.status) ? j.status : "ok";
}

export function sizing(j: S["SizingAnswer"], target: number, price: number | null): Sizing {
  const status = sizingStatus(j);
  // only a known answer carries a number (warming_up and unknown carry none)
  const bytes = status === "ok" ? num(j.memory_bytes) : null;
  const current = num(j.curve?.current_bytes) ?? 0;
  const rec = status === "ok" ? num(j.recommended_memory_limit_bytes) : null;
  const nodes = j.subject?.type === "cluster" ? num(j.nodes) : null;
  const costNow = price !== null ? monthlyCost(current, price) : null;
  // the cost of the -m to set, over all nodes
  const costAt = price !== null && (rec ?? bytes) !== null ? monthlyCost(rec !== null ? rec * (nodes ?? 1) : bytes!, price) : null;
  const b = j.band;
  const band = b
    ? {
        minBytes: num(b.memory_bytes_min),
        maxBytes: num(b.memory_bytes_max),
        confidence: num(b.confidence),
        basis: b.basis === "server_record" || b.basis === "benchmark_prior" ? (b.basis as "server_record" | "benchmark_prior") : null,
        gradedPredictions: num(b.graded_predictions),
      }
    : null;
  return {
    target: num(j.target_hit_ratio) ?? target,
    status,
    bytes,
    memoryLimitBytes: num(j.memory_limit_bytes),
    currentLimitBytes: num(j.current_memory_limit_bytes),
    nodes,
    usedBytes: num(j.used_bytes),
    atLeastBytes: num(j.memory_bytes_at_least),
    limitAtLeastBytes: num(j.memory_limit_bytes_at_least),
    currentBytes: current,
    deltaBytes: bytes !== null ? bytes - current : null,
    monthlyCostNow: costNow,
    monthlyCostAtTarget: costAt,
    deltaCost: costNow !== null && costAt !== null ? costAt - costNow : null,
    currency: "USD",
    band,
    recommendedBytes: rec,
    memoryState: j.memory_state === "short" || j.memory_state === "at_edge" || j.memory_state === "enough" ? j.memory_state : null,
    memoryStateWords: typeof j.memory_state_words === "string" ? j.memory_state_words : null,
    unknownUntil: typeof j.unknown_until === "string" ? j.unknown_until : null,
    windowLimitNote: status === "ok" && typeof j.memory_limit_note === "string" ? j.memory_limit_note : null,
    seenUpToBytes: num(j.seen_up_to_bytes),
    stable: typeof j.stable === "boolean" ? j.stable : null,
    fillRatio: num(j.fill_ratio),
    fullInSeconds: num(j.full_in_seconds),
    basis: j.policy ? `simulated ${j.policy}` : j.basis,
    dataBasis: dataBasis(j.data_basis, "watch"),
    ttlAware: j.ttl_aware === true,
    curveAgeSeconds: num(j.curve?.age_seconds),
    reachable: status === "ok",
    message: j.message ?? null,
    maxBytes: num(j.curve?.max_bytes),
    maxHitRatio: num(j.curve?.max_hit_ratio),
  };
}

/** The last `hours` of measurements, accuracy and curves (windows are a minute: up to one point each). */
export async function getHistory(kind: "server" | "cluster", id: string, hours: number, signal?: AbortSignal): Promise<History> {
  const start = new Date(Date.now() - hours * HOUR).toISOString();
  const maxPoints = Math.min(2000, Math.max(60, hours * 60));
  const query = { start, max_points: maxPoints };
  const [hist, acc, curves] = await Promise.all([
    kind === "server"
      ? api("get", "/servers/{server_id}/history", { path: { server_id: id }, query, signal })
      : api("get", "/clusters/{cluster_id}/history", { path: { cluster_id: id }, query, signal }),
    kind === "server"
      ? api("get", "/servers/{server_id}/accuracy", { path: { server_id: id }, query, signal })
      : api("get", "/clusters/{cluster_id}/accuracy", { path: { cluster_id: id }, query, signal }),
    getCurveHistory(kind, id, start, signal),
  ]);
  // A point sits at its period's newest window (the API's `at`), not at the period's start or
  // middle: the newest point is the newest window, never drawn a period before it.
  const at = (p: { at: string }) => String(p.at);
  return {
    measured: (hist.points ?? []).map((p) => ({
      time: at(p),
      measured: num(p.measured_hit_ratio),
      predicted: num(p.predicted_hit_ratio),
      lossRatio: num(p.loss_ratio),
      bytesUsed: num(p.bytes_used),
    })),
    accuracy: (acc.points ?? []).map((p) => ({ time: at(p), measured: num(p.measured_hit_ratio), predicted: num(p.predicted_hit_ratio) })),
    bucketSeconds: num(hist.bucket_seconds),
    meanAbsErrorPp: num(acc.mean_abs_error_pp),
    maxAbsErrorPp: num(acc.max_abs_error_pp),
    curves,
  };
}

/**
 * Past curves, spread over the period: GET /{servers|clusters}/{id}/curves?start=…&max_curves=…
 * → {curves: [{window_end, sizes_bytes, hit_ratios (calibrated when there is one), …}]}, oldest first.
 */
export async function getCurveHistory(kind: "server" | "cluster", id: string, start: string, signal?: AbortSignal): Promise<HistoryCurve[]> {
  const query = { start, max_curves: 14 };
  const j =
    kind === "server"
      ? await api("get", "/servers/{server_id}/curves", { path: { server_id: id }, query, signal })
      : await api("get", "/clusters/{cluster_id}/curves", { path: { cluster_id: id }, query, signal });
  return (j.curves ?? []).map((c) => ({ time: c.window_end, points: zipCurve(c.sizes_bytes, c.hit_ratios) }));
}

// --- simulations -----------------------------------------------------------------------------

function run(r: S["SimulationRunOut"]): SimulationRun {
  // Results arrive as one row per (policy, size); group them into one curve per policy.
  const byPolicy = new Map<string, { bytes: number; hit: number; cost: number | null }[]>();
  for (const x of r.results ?? []) {
    const rows = byPolicy.get(x.policy) ?? [];
    rows.push({ bytes: x.size_bytes, hit: x.hit_ratio, cost: num(x.recompute_cost_total_us) });
    byPolicy.set(x.policy, rows);
  }
  const d = (r.results ?? [])[0]?.details;
  return {
    id: String(r.id),
    sample: d
      ? {
          rate: num(d.sample_rate),
          requests: num(d.sampled_requests),
          keys: num(d.sampled_keys),
          spanSeconds: num(d.span_seconds),
          notes: Array.isArray(d.notes) ? d.notes.map(String) : [],
          periodStart: num(d.period_start_us) ? num(d.period_start_us)! / 1000 : null,
          periodEnd: num(d.period_end_us) ? num(d.period_end_us)! / 1000 : null,
          simWarmup: num(d.sim_warmup),
          footprintBytes: num(d.footprint_bytes),
          recompute: d.recompute == null ? null : String(d.recompute),
        }
      : null,
    status: oneOf(r.status, ["pending", "running", "done", "failed"], "pending"),
    progress: num(r.progress),
    createdAt: r.created_at ?? null,
    error: r.error ?? null,
    policies: r.policies ?? [],
    sizesBytes: r.sizes_bytes ?? [],
    results: [...byPolicy].map(([policy, rows]) => {
      rows.sort((a, b) => a.bytes - b.bytes);
      return { policy, points: rows.map((q) => ({ bytes: q.bytes, hit: q.hit })), recomputeCostUs: rows.map((q) => q.cost) };
    }),
  };
}

const subject = (kind: "server" | "cluster", id: string) => (kind === "server" ? { server_id: id } : { cluster_id: id });
/** A finished run's policies in money (GET /simulations/{id}/cost), as the API gives it. */
export type PolicyCostAnswer = S["PolicyCostAnswer"];
export const getPolicyCost = (id: string, memoryBytes: number, signal?: AbortSignal): Promise<PolicyCostAnswer> =>
  api("get", "/simulations/{run_id}/cost", { path: { run_id: id }, query: { memory_bytes: Math.round(memoryBytes) }, signal });
export const listSimulations = async (kind: "server" | "cluster", id: string, signal?: AbortSignal) =>
  (await api("get", "/simulations", { query: subject(kind, id), signal })).map(run);
export const getSimulation = async (id: string, signal?: AbortSignal) => run(await api("get", "/simulations/{run_id}", { path: { run_id: id }, signal }));
export const startSimulation = async (kind: "server" | "cluster", id: string, policies: string[], sizesBytes: number[]) =>
  // the API refuses a policy it does not know by name (422), so the names go as they are
  run(await api("post", "/simulations", { body: { ...subject(kind, id), policies: policies as S["SimulationIn"]["policies"], sizes_bytes: sizesBytes } }));

// --- alerts, keys, reports ---------------------------------------------------------------------

export const listAlerts = async (state: "open" | "resolved" | "all" = "open", signal?: AbortSignal): Promise<Alert[]> =>
  (await api("get", "/alerts", { query: { state, limit: 500 }, signal })).map((a) => ({
    id: String(a.id),
    kind: a.kind,
    severity: oneOf(a.severity, SEVERITIES, "warning"),
    state: oneOf(a.state, ["open", "resolved"], "open"),
    message: a.message,
    clusterId: str(a.cluster_id),
    serverId: str(a.server_id),
    firstSeenAt: a.first_seen_at ?? null,
    lastSeenAt: a.last_seen_at ?? null,
    resolvedAt: a.resolved_at ?? null,
    acknowledgedAt: a.acknowledged_at ?? null,
  }));
export const acknowledgeAlert = (id: string) => api("post", "/alerts/{alert_id}/ack", { path: { alert_id: id } });

function key(kind: KeyKind, k: S["KeyOut"] | S["ApiTokenOut"]): KeyInfo {
  return {
    id: String(k.id),
    kind,
    name: k.name,
    prefix: k.prefix ?? null,
    scope: "scope" in k ? k.scope : kind === "agent" ? "upload" : "read",
    createdAt: k.created_at ?? null,
    lastUsedAt: k.last_used_at ?? null,
    revokedAt: k.revoked_at ?? null,
  };
}
export const listKeys = async (kind: KeyKind, signal?: AbortSignal): Promise<KeyInfo[]> =>
  (kind === "agent" ? await api("get", "/agent-keys", { signal }) : await api("get", "/api-tokens", { signal })).map((k) => key(kind, k));
export async function createKey(kind: KeyKind, name: string, scope: string): Promise<NewKey> {
  if (kind === "agent") {
    const j = await api("post", "/agent-keys", { body: { name } });
    return { ...key(kind, j), secret: j.key };
  }
  const j = await api("post", "/api-tokens", { body: { name, scope: member(scope, TOKEN_SCOPES, "An API token's scope") } });
  return { ...key(kind, j), secret: j.token };
}
export const revokeKey = (kind: KeyKind, id: string) =>
  kind === "agent"
    ? api("delete", "/agent-keys/{key_id}", { path: { key_id: id } })
    : api("delete", "/api-tokens/{token_id}", { path: { token_id: id } });

function subscription(s: S["SubscriptionOut"]): ReportSubscription {
  return {
    id: String(s.id),
    email: s.email,
    clusterId: str(s.cluster_id),
    weekday: s.weekday ?? 0,
    hourUtc: s.hour_utc ?? 8,
    enabled: s.enabled ?? true,
    lastSentAt: s.last_sent_at ?? null,
    confirmedAt: s.confirmed_at ?? null,
    confirmationSentAt: s.confirmation_sent_at ?? null,
  };
}
export const listSubscriptions = async (signal?: AbortSignal) =>
  (await api("get", "/report-subscriptions", { signal })).map(subscription);
export const createSubscription = async (body: { email: string; cluster_id: string | null; weekday: number; hour_utc: number }) =>
  subscription(await api("post", "/report-subscriptions", { body }));
export const deleteSubscription = (id: string) => api("delete", "/report-subscriptions/{sub_id}", { path: { sub_id: id } });
/** Mail a pending recipient its confirmation link again. */
export const resendConfirmation = async (id: string) =>
  subscription(await api("post", "/report-subscriptions/{sub_id}/confirmation", { path: { sub_id: id } }));

/** The weekly e-mail as it would go to the logged-in user now (charts inline as data: URLs). */
export interface ReportPreview {
  subject: string;
  to: string;
  subscribed: boolean;
  html: string;
  text: string;
}
export const previewReport = async (clusterId: string | null, signal?: AbortSignal): Promise<ReportPreview> =>
  api("get", "/reports/preview", { query: clusterId ? { cluster_id: clusterId } : {}, signal });
export const sendTestReport = async (clusterId: string | null): Promise<string> =>
  String((await api("post", "/reports/test", { body: { cluster_id: clusterId } })).detail);
export interface Unsubscribed {
  email: string;
  orgName: string;
  about: string;
  already: boolean;
}
/** The confirmation mail's link: the recipient agrees to the weekly report (no session needed). */
export const confirmRecipient = async (token: string): Promise<Unsubscribed> => {
  const j = await api("post", "/reports/confirm/{token}", { path: { token } });
  return { email: j.email, orgName: j.org_name, about: j.about, already: !!j.already };
};
/** The e-mail's one-click unsubscribe link: no session needed. */
export const unsubscribe = async (token: string): Promise<Unsubscribed> => {
  const j = await api("post", "/reports/unsubscribe/{token}", { path: { token } });
  return { email: j.email, orgName: j.org_name, about: j.about, already: !!j.already };
};

// --- account mails: password reset and invitations -------------------------------------------

export const requestPasswordReset = async (email: string): Promise<string> =>
  String((await api("post", "/auth/password-reset", { body: { email } })).detail);
export const confirmPasswordReset = (token: string, newPassword: string) =>
  api("post", "/auth/password-reset/confirm", { body: { token, new_password: newPassword } });

export interface InvitationView {
  orgName: string;
  role: string;
  email: string;
  invitedBy: string | null;
  expiresAt: string;
}
export const fetchInvitation = async (token: string): Promise<InvitationView> => {
  const j = await api("get", "/invitations/{token}", { path: { token } });
  return { orgName: j.org_name, role: j.role, email: j.email, invitedBy: j.invited_by ?? null, expiresAt: j.expires_at };
};
export const acceptInvitation = (token: string) => api("post", "/invitations/accept", { body: { token } });

// --- members and invitations of the current organization (owners invite and revoke) ----------

export interface Member {
  userId: string;
  email: string;
  name: string | null;
  role: Role;
  since: string;
}
export interface PendingInvitation {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
  expiresAt: string;
}
export const listMembers = async (signal?: AbortSignal): Promise<Member[]> =>
  (await api("get", "/org/members", { signal })).map((m) => ({
    userId: String(m.user_id),
    email: m.email,
    name: m.display_name || null,
    role: m.role,
    since: m.created_at,
  }));
const invitation = (i: S["InvitationOut"]): PendingInvitation => ({ id: String(i.id), email: i.email, role: i.role, createdAt: i.created_at, expiresAt: i.expires_at });
export const listInvitations = async (signal?: AbortSignal): Promise<PendingInvitation[]> =>
  (await api("get", "/org/invitations", { signal })).map(invitation);
export const invite = async (email: string, role: Role): Promise<PendingInvitation> => invitation(await api("post", "/org/invitations", { body: { email, role } }));
export const revokeInvitation = (id: string) => api("delete", "/org/invitations/{invitation_id}", { path: { invitation_id: id } });

// --- breakdown: what is in the cache----------------------------------------------------------------

const pts = (a: number[][] | null | undefined): CurvePoint[] => (a ?? []).map(([x, y]) => ({ bytes: x, hit: y }));
const hot = (a: S["BreakdownOut"]["hot_keys"] | null | undefined): HotKeyRow[] =>
  (a ?? []).map((h) => ({ key: String(h.key), hashed: !!h.hashed, requests: h.requests, bytes: h.bytes, error: h.error }));

/** GET /servers/{id}/breakdown?target=… → prefixes, hot keys, TTL-aware memory, expired vs evicted. */
export async function getBreakdown(id: string, target: number, signal?: AbortSignal): Promise<Breakdown | null> {
  let j: S["BreakdownOut"];
  try {
    j = await api("get", "/servers/{server_id}/breakdown", { path: { server_id: id }, query: { target }, signal });
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && (e.detail as { code?: string } | null)?.code === "no_breakdown") return null;
    throw e;
  }
  return {
    windowEnd: j.window_end,
    windowsNote: str(j.windows_note),
    target: j.target,
    prefixRule: str(j.prefix_rule),
    prefixes: (j.prefixes ?? []).map((p) => ({
      prefix: String(p.prefix),
      other: !!p.other,
      requests: p.requests,
      requestShare: p.request_share,
      hitRatio: num(p.hit_ratio),
      bytes: p.bytes,
      memoryShare: num(p.memory_share),
      memoryForTarget: num(p.memory_for_target),
      curveStep: num(p.curve_step),
      ttlWhatIf: !!p.ttl_whatif,
      left: p.left ?? null,
    })),
    hotKeysHashed: !!j.hot_keys_hashed,
    hotKeys: hot(j.hot_keys),
    hotKeysByBytes: hot(j.hot_keys_by_bytes),
    ttl: j.ttl
      ? {
          aware: pts(j.ttl.points),
          oblivious: pts(j.ttl.oblivious_points),
          workingSet: j.ttl.working_set_bytes,
          workingSetOblivious: j.ttl.working_set_bytes_oblivious,
          memoryForTarget: num(j.ttl.memory_for_target),
          memoryForTargetOblivious: num(j.ttl.memory_for_target_oblivious),
          savedRatio: num(j.ttl.saved_ratio),
          gaps: String(j.ttl.gaps ?? ""),
        }
      : null,
    classes: (j.classes ?? []).map((c) => ({
      id: c.id,
      chunkSize: c.chunk_size,
      expired: c.expired,
      evicted: c.evicted,
      deleted: c.deleted,
      evictedByPageMoves: c.evicted_by_page_moves ?? 0,
    })),
    left: { expired: j.left.expired, evicted: j.left.evicted, deleted: j.left.deleted },
    evictedByPageMoves: j.left.evicted_by_page_moves ?? 0,
    storedBytes: num(j.stored_bytes),
    memoryRule: String(j.memory_rule ?? ""),
    prefixesAloneBytes: num(j.prefixes_alone_bytes),
  };
}

const splitPoint = (p: S["SplitPointOut"]): SplitPoint => ({
  prefixBytes: p.prefix_bytes,
  restBytes: p.rest_bytes,
  hit: p.hit_ratio,
  prefixHit: p.prefix_hit_ratio,
  restHit: p.rest_hit_ratio,
});

/** GET /servers/{id}/breakdown/split?prefix=…&prefix_bytes=… → the pool-split what-if of one prefix. */
export async function getPoolSplit(id: string, prefix: string, prefixBytes: number | null, signal?: AbortSignal): Promise<PoolSplit> {
  const j = await api("get", "/servers/{server_id}/breakdown/split", {
    path: { server_id: id },
    query: { prefix, prefix_bytes: prefixBytes ?? undefined },
    signal,
  });
  return {
    prefix: j.prefix,
    requestShare: j.request_share,
    occupancyShare: j.occupancy_share,
    todayBytes: j.today_bytes,
    totalBytes: j.total_bytes,
    pooledHit: j.pooled_hit_ratio,
    measuredHit: num(j.measured_hit_ratio),
    today: splitPoint(j.today_split),
    best: splitPoint(j.best),
    chosen: j.chosen ? splitPoint(j.chosen) : null,
    gainPp: j.gain_pp,
    points: (j.points ?? []).map(splitPoint),
    check: {
      diffPp: num(j.check.diff_pp),
      tolerancePp: j.check.tolerance_pp,
      passed: j.check.passed ?? null,
      prefixMeasuredHit: num(j.check.prefix_measured_hit_ratio),
    },
  };
}

/** GET /servers/{id}/breakdown/ttl?prefix=…&ttl_s=… → the TTL what-if of one prefix. */
export async function getTtlWhatIf(id: string, prefix: string, ttl: number, signal?: AbortSignal): Promise<TtlWhatIf> {
  const j = await api("get", "/servers/{server_id}/breakdown/ttl", { path: { server_id: id }, query: { prefix, ttl_s: ttl }, signal });
  return {
    prefix: j.prefix,
    ttl: j.ttl_s,
    requestShare: j.request_share,
    measuredHit: j.measured_hit_ratio,
    heldBytes: j.held_bytes,
    serverMeasuredHit: num(j.server_measured_hit_ratio),
    allowedHitToday: j.allowed_hit_ratio_today,
    allowedHit: j.allowed_hit_ratio,
    liveBytesToday: j.live_bytes_today,
    liveBytes: j.live_bytes,
    prefixHit: j.prefix_hit_ratio,
    serverHit: num(j.server_hit_ratio),
    serverHitUnbounded: num(j.server_hit_ratio_unbounded),
    memoryForTodayHit: num(j.memory_for_today_hit_ratio),
    memoryChange: num(j.memory_change_bytes),
    reachable: !!j.reachable,
    bound: !!j.bound,
    sampledReads: j.sampled_reads,
    grid: (j.grid ?? []).map((g) => ({ ttl: g.ttl_s, allowedHit: g.allowed_hit_ratio, liveBytes: g.live_bytes })),
    windowsNote: str(j.windows_note),
    gaps: String(j.gaps ?? ""),
  };
}

// --- alert notification channels and their delivery log --------------------------

export type ChannelKind = "webhook" | "slack" | "pagerduty" | "alertmanager";
export interface Channel {
  id: string;
  name: string;
  kind: ChannelKind;
  url: string;
  minSeverity: string;
  enabled: boolean;
  signed: boolean;
  routingKeyHint: string | null;
  lastDeliveryStatus: string | null;
  lastDeliveryAt: string | null;
}
export interface ChannelDraft {
  name: string;
  kind: ChannelKind;
  url?: string;
  routing_key?: string;
  min_severity: string;
}
export interface Delivery {
  id: number;
  channelName: string;
  event: "opened" | "resolved" | "test";
  alertMessage: string | null;
  status: "pending" | "retrying" | "delivered" | "failed";
  attempts: number;
  responseCode: number | null;
  lastError: string | null;
  createdAt: string;
}
const channel = (c: S["ChannelOut"]): Channel => ({
  id: String(c.id),
  name: c.name,
  kind: c.kind,
  url: c.url,
  minSeverity: c.min_severity,
  enabled: !!c.enabled,
  signed: !!c.signed,
  routingKeyHint: str(c.routing_key_hint),
  lastDeliveryStatus: str(c.last_delivery_status),
  lastDeliveryAt: str(c.last_delivery_at),
});
const delivery = (d: S["DeliveryOut"]): Delivery => ({
  id: Number(d.id),
  channelName: d.channel_name,
  event: d.event,
  alertMessage: str(d.alert_message),
  status: d.status,
  attempts: Number(d.attempts),
  responseCode: num(d.response_code),
  lastError: str(d.last_error),
  createdAt: d.created_at,
});
export const listChannels = async (signal?: AbortSignal): Promise<Channel[]> =>
  (await api("get", "/notification-channels", { signal })).map(channel);
/** The new channel, its webhook secret (shown only now) and how many open alerts it would take. */
export const createChannel = async (draft: ChannelDraft): Promise<{ channel: Channel; secret: string | null; openAlerts: number }> => {
  const body = { ...draft, min_severity: member(draft.min_severity, SEVERITIES, "A channel's minimum severity") };
  const j = await api("post", "/notification-channels", { body });
  return { channel: channel(j), secret: str(j.secret), openAlerts: num(j.open_alerts) ?? 0 };
};
/** Sends the alerts open now to one channel (each once); answers how many were queued. */
export const sendOpenAlerts = async (id: string): Promise<number> =>
  Number((await api("post", "/notification-channels/{channel_id}/send-open-alerts", { path: { channel_id: id } })).queued);
export const setChannelEnabled = async (id: string, enabled: boolean) => channel(await api("patch", "/notification-channels/{channel_id}", { path: { channel_id: id }, body: { enabled } }));
export const deleteChannel = (id: string) => api("delete", "/notification-channels/{channel_id}", { path: { channel_id: id } });
export const sendTestNotification = async (id: string): Promise<Delivery> => delivery(await api("post", "/notification-channels/{channel_id}/test", { path: { channel_id: id } }));
export const listDeliveries = async (signal?: AbortSignal): Promise<Delivery[]> =>
  (await api("get", "/alert-deliveries", { query: { limit: 50 }, signal })).map(delivery);

/** The install's own setting for private channel targets (loopback, private, link-local). */
export interface PrivateTargets {
  allowed: boolean;
  stored: boolean;
  fromEnvironment: boolean;
  canChange: boolean;
  changedAt: string | null;
  changedBy: string | null;
}
const privateTargets = (j: Record<string, unknown>): PrivateTargets => ({
  allowed: j.allow_private_webhooks === true,
  stored: j.stored === true,
  fromEnvironment: j.from_environment === true,
  canChange: j.can_change === true,
  changedAt: str(j.changed_at),
  changedBy: str(j.changed_by),
});
export const getPrivateTargets = async (signal?: AbortSignal): Promise<PrivateTargets> =>
  privateTargets(await api("get", "/install-settings", { signal }));
export const setPrivateTargets = async (allow: boolean): Promise<PrivateTargets> =>
  privateTargets(await api("patch", "/install-settings", { body: { allow_private_webhooks: allow } }));

// --- agent install -------------------------------------------------------------------------

export type InstallVariant = "systemd" | "no-systemd" | "container" | "foreground";
/** The block that installs and starts the agent on one kind of host (key_placeholder where the
 * agent key goes), as GET /agent-install writes it. */
export const getAgentInstall = (variant: InstallVariant, memcached: string, signal?: AbortSignal) =>
  api("get", "/agent-install", { query: { variant, memcached }, signal });
/** The agent release this Hitcurve serves (the artefacts the blocks download). */
export const getAgentRelease = (signal?: AbortSignal) => api("get", "/agent-release", { signal });
