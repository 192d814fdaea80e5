// Typed calls to /api/v1, each mapping the backend's JSON onto the view models in ./types.
import type { CurvePoint } from "../lib/curve";
import { monthlyCost } from "../lib/curve";
import { ApiError, del, get, post, qs, patch } from "./client";
import type {
  Alert, Breakdown, PoolSplit, SplitPoint, TtlWhatIf, ClusterSummary, CurveView, DataBasis, History, HistoryCurve, HotKeyRow, KeyInfo, KeyKind, NewKey, PageMove,
  ReportSubscription, Role, ServerSummary, Session, SimulationRun, Sizing, Status,
} from "./types";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type J = any;

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : v == null ? null : Number.isFinite(Number(v)) ? Number(v) : null);
const str = (v: unknown): string | null => (v == null ? null : String(v));

// --- session -------------------------------------------------------------------------------

function session(j: J): Session {
  return {
    user: { id: String(j.user.id), email: j.user.email, name: j.user.display_name || null },
    orgs: (j.memberships ?? []).map((m: J) => ({ id: String(m.org_id), name: m.org_name, role: m.role })),
    currentOrgId: str(j.org_id),
  };
}

export const fetchSession = async (): Promise<Session> => session(await get<J>("/auth/me"));
export const logIn = async (email: string, password: string): Promise<Session> =>
  session(await post<J>("/auth/login", { email, password }));
/** Starts a sign-up: the answer ("check your inbox") is the same whether or not the e-mail has an account. */
export const signUp = async (email: string, password: string, orgName: string): Promise<string> =>
  String((await post<J>("/auth/signup", { email, password, org_name: orgName })).detail);
/** The mailed confirmation link: creates the account and logs in. */
export const confirmSignup = async (token: string): Promise<Session> => session(await post<J>("/auth/signup/confirm", { token }));
export const logOut = () => post<void>("/auth/logout");
export const switchOrg = async (orgId: string): Promise<Session> => session(await post<J>("/auth/switch-org", { org_id: orgId }));

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
const clusterRow = (c: J) => ({
  id: String(c.id),
  name: String(c.name),
  targetHitRatio: num(c.target_hit_ratio),
  pricePerGbMonth: num(c.price_per_gb_month),
  serverCount: num(c.server_count) ?? 0,
});
export const listClusterRows = async (signal?: AbortSignal) => ((await get<J>("/clusters", signal)) as J[]).map(clusterRow);

/**
 * The overview's row per cluster: GET /clusters carries a summary of each cluster (latest curve's
 * memory and measured hit ratio, the sizing API's answer for its target, open alerts, status).
 */
export async function listClusters(signal?: AbortSignal): Promise<ClusterSummary[]> {
  const raw = (await get<J>("/clusters", signal)) as J[];
  return raw.map((j) =>
    clusterSummary(clusterRow(j), {
      allocated: num(j.allocated_bytes),
      measured: num(j.measured_hit_ratio),
      needed: ["ok", "warming_up", null, undefined].includes(j.memory_for_target_status) ? num(j.memory_for_target_bytes) : null,
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
  post<J>("/clusters", body);

/** The API's data_basis; `fallback` when absent (older backends: everything came from watch). */
export function dataBasis<T extends DataBasis | null>(v: unknown, fallback: T): DataBasis | T {
  return v === "watch" || v === "stats_only" || v === "mixed" ? v : fallback;
}

function serverBase(s: J, clusters: Map<string, string>): ServerSummary {
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
    get<J>(`/servers${qs({ cluster_id: clusterId, limit: 500 })}`, signal) as Promise<J[]>,
    listClusterRows(signal).catch(() => []),
  ]);
  const names = new Map(clusters.map((c) => [c.id, c.name]));
  return rows.map((row) => serverBase(row, names));
}

export const assignServer = (serverId: string, clusterId: string | null) => patch<J>(`/servers/${serverId}`, { cluster_id: clusterId });

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

function advice(a: J): { moves: PageMove[]; gain: number | null } {
  const moves = Array.isArray(a?.moves) ? a.moves : [];
  return {
    moves: moves.map((m: J) => ({ fromClass: m.from_class, toClass: m.to_class, pages: m.pages, hitGain: num(m.hit_gain) })),
    // The worker writes the gain in percentage points (gain_pp); older rows carry a ratio.
    gain: a?.gain_pp != null ? (num(a.gain_pp) ?? 0) / 100 : num(a?.rebalance_gain ?? a?.gain ?? a?.hit_gain),
  };
}

export async function getServerCurve(id: string, signal?: AbortSignal): Promise<CurveView> {
  const j = await get<J>(`/servers/${id}/curve`, signal);
  const m = j.merged;
  const server = j.server;
  const cluster = server.cluster_id ? await settle(get<J>(`/clusters/${server.cluster_id}`, signal)) : null;
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
    classes: (j.classes ?? []).map((c: J) => ({
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
  };
}

export async function getClusterCurve(id: string, signal?: AbortSignal): Promise<CurveView> {
  const j = await get<J>(`/clusters/${id}/curve`, signal);
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
    observedMaxBytes: num(j.observed_max_bytes),
    memcachedVersion: null,
    dataBasis: "watch", // the cluster's sizing answer says otherwise (Sizing.dataBasis)
    windowsNote: null,
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
  const j = await get<J>(`/sizing/${kind}s/${id}/memory${qs({ target_hit_ratio: target })}`, signal);
  return sizing(j, target, pricePerGbMonth);
}

const STATUSES = ["ok", "warming_up", "above_curve", "unreachable"] as const;

/** The API's sizing status. */
function sizingStatus(j: J): Sizing["status"] {
  return (STATUSES as readonly string[]).includes(j.status) ? j.status : "ok";
}

export function sizing(j: J, target: number, price: number | null): Sizing {
  const status = sizingStatus(j);
  // A warming answer still carries the curve's provisional number.
  const bytes = status === "ok" || status === "warming_up" ? num(j.memory_bytes) : null;
  const current = num(j.curve?.current_bytes) ?? 0;
  const costNow = price !== null ? monthlyCost(current, price) : null;
  const costAt = price !== null && bytes !== null ? monthlyCost(bytes, price) : null;
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
    nodes: j.subject?.type === "cluster" ? num(j.nodes) : null,
    usedBytes: num(j.used_bytes),
    atLeastBytes: num(j.memory_bytes_at_least) ?? (status === "above_curve" || status === "unreachable" ? num(j.curve?.max_bytes) : null),
    limitAtLeastBytes: num(j.memory_limit_bytes_at_least),
    currentBytes: current,
    deltaBytes: bytes !== null ? bytes - current : null,
    monthlyCostNow: costNow,
    monthlyCostAtTarget: costAt,
    deltaCost: costNow !== null && costAt !== null ? costAt - costNow : null,
    currency: "USD",
    band,
    recommendedBytes: num(j.recommended_memory_limit_bytes),
    stable: typeof j.stable === "boolean" ? j.stable : null,
    fillRatio: num(j.fill_ratio),
    fullInSeconds: num(j.full_in_seconds),
    basis: j.policy ? `simulated ${j.policy}` : j.basis,
    dataBasis: dataBasis(j.data_basis, "watch"),
    ttlAware: j.ttl_aware === true,
    curveAgeSeconds: num(j.curve?.age_seconds),
    reachable: status === "ok" || status === "warming_up",
    message: j.message ?? null,
    maxBytes: num(j.curve?.max_bytes),
    maxHitRatio: num(j.curve?.max_hit_ratio),
  };
}

/** The last `hours` of measurements, accuracy and curves (windows are a minute: up to one point each). */
export async function getHistory(kind: "server" | "cluster", id: string, hours: number, signal?: AbortSignal): Promise<History> {
  const start = new Date(Date.now() - hours * HOUR).toISOString();
  const maxPoints = Math.min(2000, Math.max(60, hours * 60));
  const [hist, acc, curves] = await Promise.all([
    get<J>(`/${kind}s/${id}/history${qs({ start, max_points: maxPoints })}`, signal),
    get<J>(`/${kind}s/${id}/accuracy${qs({ start, max_points: maxPoints })}`, signal),
    getCurveHistory(kind, id, start, signal),
  ]);
  // A point sits at its period's newest window (the API's `at`), not at the period's start or
  // middle: the newest point is the newest window, never drawn a period before it.
  const at = (p: J) => String(p.at);
  return {
    measured: (hist.points ?? []).map((p: J) => ({
      time: at(p),
      measured: num(p.measured_hit_ratio),
      predicted: num(p.predicted_hit_ratio),
      lossRatio: num(p.loss_ratio),
      bytesUsed: num(p.bytes_used),
    })),
    accuracy: (acc.points ?? []).map((p: J) => ({ time: at(p), measured: num(p.measured_hit_ratio), predicted: num(p.predicted_hit_ratio) })),
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
  const j = await get<J>(`/${kind}s/${id}/curves${qs({ start, max_curves: 14 })}`, signal);
  return (j.curves ?? []).map((c: J) => ({ time: c.window_end, points: zipCurve(c.sizes_bytes, c.hit_ratios) }));
}

// --- simulations -----------------------------------------------------------------------------

function run(r: J): SimulationRun {
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
        }
      : null,
    status: r.status,
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

export const listSimulations = async (kind: "server" | "cluster", id: string, signal?: AbortSignal) =>
  ((await get<J>(`/simulations${qs({ [`${kind}_id`]: id })}`, signal)) as J[]).map(run);
export const getSimulation = async (id: string, signal?: AbortSignal) => run(await get<J>(`/simulations/${id}`, signal));
export const startSimulation = async (kind: "server" | "cluster", id: string, policies: string[], sizesBytes: number[]) =>
  run(await post<J>("/simulations", { [`${kind}_id`]: id, policies, sizes_bytes: sizesBytes }));

// --- alerts, keys, reports ---------------------------------------------------------------------

export const listAlerts = async (state: "open" | "resolved" | "all" = "open", signal?: AbortSignal): Promise<Alert[]> =>
  ((await get<J>(`/alerts${qs({ state, limit: 500 })}`, signal)) as J[]).map((a) => ({
    id: String(a.id),
    kind: a.kind,
    severity: a.severity ?? "warning",
    state: a.state ?? "open",
    message: a.message,
    clusterId: str(a.cluster_id),
    serverId: str(a.server_id),
    firstSeenAt: a.first_seen_at ?? null,
    lastSeenAt: a.last_seen_at ?? null,
    resolvedAt: a.resolved_at ?? null,
    acknowledgedAt: a.acknowledged_at ?? null,
  }));
export const acknowledgeAlert = (id: string) => post<void>(`/alerts/${id}/ack`);

function key(kind: KeyKind, k: J): KeyInfo {
  return {
    id: String(k.id),
    kind,
    name: k.name,
    prefix: k.prefix ?? null,
    scope: k.scope ?? (kind === "agent" ? "upload" : "read"),
    createdAt: k.created_at ?? null,
    lastUsedAt: k.last_used_at ?? null,
    revokedAt: k.revoked_at ?? null,
  };
}
const keyPath = (kind: KeyKind) => (kind === "agent" ? "/agent-keys" : "/api-tokens");
export const listKeys = async (kind: KeyKind, signal?: AbortSignal) =>
  ((await get<J>(keyPath(kind), signal)) as J[]).map((k) => key(kind, k));
export async function createKey(kind: KeyKind, name: string, scope: string): Promise<NewKey> {
  const j = await post<J>(keyPath(kind), kind === "agent" ? { name } : { name, scope });
  return { ...key(kind, j), secret: kind === "agent" ? j.key : j.token };
}
export const revokeKey = (kind: KeyKind, id: string) => del<void>(`${keyPath(kind)}/${id}`);

function subscription(s: J): ReportSubscription {
  return {
    id: String(s.id),
    email: s.email,
    clusterId: str(s.cluster_id),
    weekday: s.weekday ?? 0,
    hourUtc: s.hour_utc ?? 8,
    enabled: s.enabled ?? true,
    lastSentAt: s.last_sent_at ?? null,
  };
}
export const listSubscriptions = async (signal?: AbortSignal) =>
  ((await get<J>("/report-subscriptions", signal)) as J[]).map(subscription);
export const createSubscription = async (body: { email: string; cluster_id: string | null; weekday: number; hour_utc: number }) =>
  subscription(await post<J>("/report-subscriptions", body));
export const deleteSubscription = (id: string) => del<void>(`/report-subscriptions/${id}`);

/** The weekly e-mail as it would go to the logged-in user now (charts inline as data: URLs). */
export interface ReportPreview {
  subject: string;
  to: string;
  subscribed: boolean;
  html: string;
  text: string;
}
export const previewReport = async (clusterId: string | null, signal?: AbortSignal): Promise<ReportPreview> =>
  (await get<J>(`/reports/preview${clusterId ? qs({ cluster_id: clusterId }) : ""}`, signal)) as ReportPreview;
export const sendTestReport = async (clusterId: string | null): Promise<string> =>
  String((await post<J>("/reports/test", { cluster_id: clusterId })).detail);
export interface Unsubscribed {
  email: string;
  orgName: string;
  about: string;
  already: boolean;
}
/** The e-mail's one-click unsubscribe link: no session needed. */
export const unsubscribe = async (token: string): Promise<Unsubscribed> => {
  const j = await post<J>(`/reports/unsubscribe/${encodeURIComponent(token)}`);
  return { email: j.email, orgName: j.org_name, about: j.about, already: !!j.already };
};

// --- account mails: password reset and invitations -------------------------------------------

export const requestPasswordReset = async (email: string): Promise<string> =>
  String((await post<J>("/auth/password-reset", { email })).detail);
export const confirmPasswordReset = (token: string, newPassword: string) =>
  post<void>("/auth/password-reset/confirm", { token, new_password: newPassword });

export interface InvitationView {
  orgName: string;
  role: string;
  email: string;
  invitedBy: string | null;
  expiresAt: string;
}
export const fetchInvitation = async (token: string): Promise<InvitationView> => {
  const j = await get<J>(`/invitations/${encodeURIComponent(token)}`);
  return { orgName: j.org_name, role: j.role, email: j.email, invitedBy: j.invited_by ?? null, expiresAt: j.expires_at };
};
export const acceptInvitation = (token: string) => post<J>("/invitations/accept", { token });

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
  ((await get<J>("/org/members", signal)) as J[]).map((m) => ({
    userId: String(m.user_id),
    email: m.email,
    name: m.display_name || null,
    role: m.role,
    since: m.created_at,
  }));
const invitation = (i: J): PendingInvitation => ({ id: String(i.id), email: i.email, role: i.role, createdAt: i.created_at, expiresAt: i.expires_at });
export const listInvitations = async (signal?: AbortSignal): Promise<PendingInvitation[]> =>
  ((await get<J>("/org/invitations", signal)) as J[]).map(invitation);
export const invite = async (email: string, role: Role): Promise<PendingInvitation> => invitation(await post<J>("/org/invitations", { email, role }));
export const revokeInvitation = (id: string) => del<void>(`/org/invitations/${id}`);

// --- breakdown (issue 16) --------------------------------------------------------------------

const pts = (a: J[] | null | undefined): CurvePoint[] => (a ?? []).map(([x, y]: [number, number]) => ({ bytes: x, hit: y }));
const hot = (a: J[] | null | undefined): HotKeyRow[] =>
  (a ?? []).map((h: J) => ({ key: String(h.key), hashed: !!h.hashed, requests: h.requests, bytes: h.bytes, error: h.error }));

/** GET /servers/{id}/breakdown?target=… → prefixes, hot keys, TTL-aware memory, expired vs evicted. */
export async function getBreakdown(id: string, target: number, signal?: AbortSignal): Promise<Breakdown | null> {
  let j: J;
  try {
    j = await get<J>(`/servers/${id}/breakdown${qs({ target })}`, signal);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && (e.detail as { code?: string } | null)?.code === "no_breakdown") return null;
    throw e;
  }
  return {
    windowEnd: j.window_end,
    windowsNote: str(j.windows_note),
    target: j.target,
    prefixRule: str(j.prefix_rule),
    prefixes: (j.prefixes ?? []).map((p: J) => ({
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
    classes: (j.classes ?? []).map((c: J) => ({
      id: c.id,
      chunkSize: c.chunk_size,
      expired: c.expired,
      evicted: c.evicted,
      deleted: c.deleted,
      evictedByPageMoves: c.evicted_by_page_moves ?? 0,
    })),
    left: { expired: j.left.expired, evicted: j.left.evicted, deleted: j.left.deleted },
    evictedByPageMoves: j.left.evicted_by_page_moves ?? 0,
  };
}

const splitPoint = (p: J): SplitPoint => ({
  prefixBytes: p.prefix_bytes,
  restBytes: p.rest_bytes,
  hit: p.hit_ratio,
  prefixHit: p.prefix_hit_ratio,
  restHit: p.rest_hit_ratio,
});

/** GET /servers/{id}/breakdown/split?prefix=…&prefix_bytes=… → the pool-split what-if of one prefix. */
export async function getPoolSplit(id: string, prefix: string, prefixBytes: number | null, signal?: AbortSignal): Promise<PoolSplit> {
  const j = await get<J>(`/servers/${id}/breakdown/split${qs({ prefix, prefix_bytes: prefixBytes ?? undefined })}`, signal);
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
  const j = await get<J>(`/servers/${id}/breakdown/ttl${qs({ prefix, ttl_s: ttl })}`, signal);
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
    grid: (j.grid ?? []).map((g: J) => ({ ttl: g.ttl_s, allowedHit: g.allowed_hit_ratio, liveBytes: g.live_bytes })),
    windowsNote: str(j.windows_note),
    gaps: String(j.gaps ?? ""),
  };
}

// --- alert notification channels and their delivery log (issue 18) --------------------------

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
const channel = (c: J): Channel => ({
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
const delivery = (d: J): Delivery => ({
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
  ((await get<J>("/notification-channels", signal)) as J[]).map(channel);
/** The new channel and, for a webhook, its signing secret (shown once). */
export const createChannel = async (draft: ChannelDraft): Promise<{ channel: Channel; secret: string | null }> => {
  const j = await post<J>("/notification-channels", draft);
  return { channel: channel(j), secret: str(j.secret) };
};
export const setChannelEnabled = async (id: string, enabled: boolean) => channel(await patch<J>(`/notification-channels/${id}`, { enabled }));
export const deleteChannel = (id: string) => del<void>(`/notification-channels/${id}`);
export const sendTestNotification = async (id: string): Promise<Delivery> => delivery(await post<J>(`/notification-channels/${id}/test`));
export const listDeliveries = async (signal?: AbortSignal): Promise<Delivery[]> =>
  ((await get<J>(`/alert-deliveries${qs({ limit: 50 })}`, signal)) as J[]).map(delivery);
