// View models the pages use. api/endpoints.ts maps the backend's JSON onto these, so a change
// in the API touches one adapter, not every page.
import type { CurvePoint } from "../lib/curve";

export type Role = "owner" | "member" | "viewer";
export type Org = { id: string; name: string; role: Role };
export type User = { id: string; email: string; name: string | null };
export type Session = { user: User; orgs: Org[]; currentOrgId: string | null };

/** warming_up: memcached is still filling on the cluster's nodes (its hit rate still rises). */
export type Status = "ok" | "warning" | "critical" | "no_data" | "warming_up";

export type ClusterSummary = {
  id: string;
  name: string;
  targetHitRatio: number | null;
  pricePerGbMonth: number | null;
  currency: string;
  serverCount: number;
  allocatedBytes: number | null;
  measuredHitRatio: number | null;
  neededBytes: number | null;
  monthlyCostNow: number | null;
  monthlyCostAtTarget: number | null;
  /** The target is above what the curve reaches. */
  neededUnreachable: boolean;
  status: Status;
  openAlerts: number;
  /** The sizing API's answer for the target (warm-up, bound, -m per node); null without a curve. */
  targetAnswer: Sizing | null;
};

export type ServerSummary = {
  id: string;
  address: string;
  hostname: string | null;
  clusterId: string | null;
  clusterName: string | null;
  version: string | null;
  agentVersion: string | null;
  limitBytes: number | null;
  lastSeen: string | null;
  lossRatio: number | null;
  /** Event loss above the API's threshold (GET /thresholds). */
  lossWarning: boolean;
  /** Mean |predicted − measured| over a day, percentage points. */
  curveError: number | null;
  /** Curve error above the API's threshold. */
  curveErrorWarning: boolean;
  measuredHitRatio: number | null;
  /** What the latest window rests on: memcached's watch stream, or `stats` alone (memcached refused `watch`). */
  dataBasis: DataBasis | null;
  /** The API's status (GET /servers); the dashboard derives none. */
  status: Status;
  /** Why the status is not OK, in a few words. */
  statusNote: string | null;
};

/** watch: the agent read memcached's watch stream; stats_only: memcached refused `watch` and the
 * curve is a model fitted to its `stats` counters (wider band); mixed: a cluster with both. */
export type DataBasis = "watch" | "stats_only" | "mixed";

export type SlabClass = {
  id: number;
  chunkSize: number;
  pages: number;
  requests: number;
  currentBytes: number;
  points: CurvePoint[];
};

export type PageMove = { fromClass: number; toClass: number; pages: number; hitGain: number | null };

export type CurveBasis = "estimate" | "calibrated" | "simulated";

export type CurveView = {
  kind: "server" | "cluster";
  id: string;
  name: string;
  basis: CurveBasis;
  computedAt: string | null;
  currentBytes: number;
  measuredHitRatio: number | null;
  targetHitRatio: number | null;
  pricePerGbMonth: number | null;
  currency: string;
  /** Calibrated curve with band edges. */
  points: CurvePoint[];
  /** The uncalibrated estimate, when different. */
  estimate: CurvePoint[] | null;
  clusterId: string | null;
  clusterName: string | null;
  classes: SlabClass[];
  advice: PageMove[];
  adviceHitGain: number | null;
  lossRatio: number | null;
  /** Past this memory the agent has observed nothing yet (null: the whole curve is observed). */
  observedMaxBytes: number | null;
  /** memcached's version (servers). */
  memcachedVersion: string | null;
  /** What the curve rests on (servers: the curve's window; clusters: from the sizing answer). */
  dataBasis: DataBasis;
  /** Servers: newer windows were left out (quiet, stream loss): the curve is the newest good one's. */
  windowsNote: string | null;
  /** Servers with a flash tier (memcached's extstore); null without one, and for clusters. */
  flashTier: FlashTier | null;
  /** Clusters: how many servers are assigned to it; null for servers. */
  serverCount: number | null;
};

/** memcached's flash tier on a server (the API's FlashTierOut, hitcurve/sizing/flash.py). */
export type FlashTier = {
  limitBytes: number;
  bytesUsed: number;
  /** flash pages taken / all pages */
  fillRatio: number;
  /** items in RAM that are headers of values on flash, and the RAM they take */
  headerItems: number;
  headerBytes: number;
  /** of memcached's get_hits, those the flash served / those whose flash read found nothing */
  flashHitShare: number | null;
  flashMissShare: number | null;
  readsPerS: number | null;
  readBytesPerS: number | null;
  writesPerS: number | null;
  writeBytesPerS: number | null;
  windows: number;
  /** what the curve means on this server, in the API's words (SizingAnswer.flash_note) */
  note: string;
};

/** What the sizing API said: ok; not known yet (warming_up: memcached still filling; unknown: the
 * agent has not yet seen out to the target), with no number; the target past the curve the agent
 * has seen whole (above_curve: `atLeastBytes` is then a lower bound); or no memory reaches it
 * (unreachable). */
export type SizingStatus = "ok" | "warming_up" | "unknown" | "above_curve" | "unreachable";

export type Sizing = {
  target: number;
  status: SizingStatus;
  /** The curve's memory for the target (null above the curve). */
  bytes: number | null;
  /** This window's curve alone: the -m at which memcached holds `bytes` (moves every window); the
   * -m to set is `recommendedBytes`. Null when not known. */
  memoryLimitBytes: number | null;
  /** -m today (limit_maxbytes); a cluster's summed over its nodes. */
  currentLimitBytes: number | null;
  /** Clusters: the nodes memoryLimitBytes is the -m of each of. */
  nodes: number | null;
  /** Slab pages memcached has taken today (counts toward -m). */
  usedBytes: number | null;
  /** Above the curve: the target needs more than this. */
  atLeastBytes: number | null;
  /** Above the curve: the -m (per node for clusters) the target needs more than. */
  limitAtLeastBytes: number | null;
  currentBytes: number;
  deltaBytes: number | null;
  monthlyCostNow: number | null;
  monthlyCostAtTarget: number | null;
  deltaCost: number | null;
  currency: string;
  /** Memory range for the target at the stated confidence (maxBytes null: past the curve), and what
   * its drift rests on: this server's graded predictions, or the benchmark's error before any. */
  band: {
    minBytes: number | null;
    maxBytes: number | null;
    confidence: number | null;
    basis: "server_record" | "benchmark_prior" | null;
    gradedPredictions: number | null;
  } | null;
  /** The one -m to set (per node for clusters): moves only outside its hysteresis band, always
   * inside the answer's band; the value every surface shows. `stable` says it held. */
  recommendedBytes: number | null;
  /** Set when this window's curve alone says another -m than the one to set: what it is and why
   * it differs (the API's memory_limit_note). */
  windowLimitNote: string | null;
  /** Today's -m against a known answer (the API's memory_state, hitcurve/rules/shortage.py):
   * short only when even the band's optimistic -m is above it (the memory alert's one rule),
   * at_edge when it lies inside the band below the -m to set (no alert), enough; null while not
   * known. `memoryStateWords` is the API's sentence for it. */
  memoryState: "short" | "at_edge" | "enough" | null;
  memoryStateWords: string | null;
  /** Not known yet: what the answer waits for, in the API's words ("unknown until …"). */
  unknownUntil: string | null;
  /** How far the agent has seen the curve (null: all of it). */
  seenUpToBytes: number | null;
  stable: boolean | null;
  /** Warming up: share of -m memcached has taken, and an estimate of when it is full. */
  fillRatio: number | null;
  fullInSeconds: number | null;
  basis: string;
  /** What the answer's curve rests on (the API's data_basis; "watch" from older backends). */
  dataBasis: DataBasis;
  /** The curve models expiry (the agent's TTL-aware curves, traffic with TTLs). */
  ttlAware: boolean;
  curveAgeSeconds: number | null;
  reachable: boolean;
  message: string | null;
  maxBytes: number | null;
  maxHitRatio: number | null;
};

/** time: where the point is drawn, the end of its period's newest window (the API's `at`). */
export type AccuracyPoint = { time: string; measured: number | null; predicted: number | null };
export type HistoryCurve = { time: string; points: CurvePoint[] };
export type MeasuredPoint = AccuracyPoint & { lossRatio: number | null; bytesUsed: number | null };
export type History = {
  measured: MeasuredPoint[];
  accuracy: AccuracyPoint[];
  meanAbsErrorPp: number | null;
  maxAbsErrorPp: number | null;
  /** Seconds each measured/accuracy point covers (the API's bucket). */
  bucketSeconds: number | null;
  /** null: the API has no curve history endpoint yet. */
  curves: HistoryCurve[];
};

export type PolicyResult = {
  policy: string;
  /** Hit ratio at each simulated size. */
  points: CurvePoint[];
  /** Total recompute cost (µs) of the misses at each size, same order as points. */
  recomputeCostUs: (number | null)[];
};
export type SimulationRun = {
  id: string;
  status: "pending" | "running" | "done" | "failed";
  progress: number | null;
  createdAt: string | null;
  error: string | null;
  policies: string[];
  sizesBytes: number[];
  results: PolicyResult[];
  /** The sample the results rest on (from the results; null before any). */
  sample: RunSample | null;
};
export type RunSample = {
  rate: number | null;
  requests: number | null;
  keys: number | null;
  spanSeconds: number | null;
  notes: string[];
  /** The replayed period (first and last request, ms since the epoch); null from older workers. */
  periodStart: number | null;
  periodEnd: number | null;
  /** Share of the replayed requests that only warmed the simulated caches (not counted). */
  simWarmup: number | null;
  /** The sample's keys' bytes / R: at and above it every policy holds the whole sample. */
  footprintBytes: number | null;
  /** What the recompute time sums, in the worker's words. */
  recompute: string | null;
};

export type Alert = {
  id: string;
  kind: string;
  severity: "info" | "warning" | "critical";
  state: "open" | "resolved";
  message: string;
  clusterId: string | null;
  serverId: string | null;
  firstSeenAt: string | null;
  lastSeenAt: string | null;
  resolvedAt: string | null;
  acknowledgedAt: string | null;
};

export type KeyKind = "agent" | "api";
export type KeyInfo = {
  id: string;
  kind: KeyKind;
  name: string;
  prefix: string | null;
  /** API tokens: "read" or "read_write"; agent keys: "upload". */
  scope: string;
  createdAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
};
export type NewKey = KeyInfo & { secret: string };

export type ReportSubscription = {
  id: string;
  email: string;
  clusterId: string | null;
  /** 0 = Monday. */
  weekday: number;
  hourUtc: number;
  enabled: boolean;
  lastSentAt: string | null;
  /** Null: the recipient has not followed the confirmation mail's link; nothing is sent yet. */
  confirmedAt: string | null;
  confirmationSentAt: string | null;
};

/** GET /servers/{id}/breakdown: what is in the cache, from the latest window. */
export type Left = { expired: number; evicted: number; deleted: number };
/** Per slab class: `evictedByPageMoves` of `evicted` were memcached moving the class's pages to
 * another class (memcached >= 1.6.34 counts them as evictions), not a shortage of memory. */
export type ClassLeft = Left & { id: number; chunkSize: number; evictedByPageMoves: number };
export type PrefixRow = {
  prefix: string;
  other: boolean;
  requests: number;
  requestShare: number;
  hitRatio: number | null;
  bytes: number;
  memoryShare: number | null;
  memoryForTarget: number | null;
  /** Bytes between curve points: an answer below it reads "at most". */
  curveStep: number | null;
  /** The window carries its TTL what-if (GET /servers/{id}/breakdown/ttl). */
  ttlWhatIf?: boolean;
  left: Left | null;
};
export type HotKeyRow = { key: string; hashed: boolean; requests: number; bytes: number; error: number };
export type Breakdown = {
  windowEnd: string;
  /** Newer windows left out (loss-flagged or quiet); null when the newest window is used. */
  windowsNote: string | null;
  target: number;
  prefixRule: string | null;
  prefixes: PrefixRow[];
  hotKeysHashed: boolean;
  hotKeys: HotKeyRow[];
  hotKeysByBytes: HotKeyRow[];
  ttl: {
    aware: CurvePoint[];
    oblivious: CurvePoint[];
    workingSet: number;
    workingSetOblivious: number;
    memoryForTarget: number | null;
    memoryForTargetOblivious: number | null;
    savedRatio: number | null;
    gaps: string;
  } | null;
  classes: ClassLeft[];
  left: Left;
  /** Of `left.evicted`, those slab page moves caused (sum over the classes). */
  evictedByPageMoves: number;
  /** memcached's stored bytes at the window's end: the prefixes' memory held adds up to at most this. */
  storedBytes: number | null;
  /** How memory held per prefix is worked out (the backend's rule, stated). */
  memoryRule: string;
  /** The prefixes' own-pool answers summed (separate pools); null when one cannot reach the target. */
  prefixesAloneBytes: number | null;
};

/** GET /servers/{id}/breakdown/ttl: one prefix's TTL changed. */
export type TtlGridPoint = { ttl: number; allowedHit: number; liveBytes: number };
export type TtlWhatIf = {
  prefix: string;
  ttl: number;
  requestShare: number;
  measuredHit: number;
  heldBytes: number;
  serverMeasuredHit: number | null;
  allowedHitToday: number;
  allowedHit: number;
  liveBytesToday: number;
  liveBytes: number;
  prefixHit: number;
  serverHit: number | null;
  serverHitUnbounded: number | null;
  memoryForTodayHit: number | null;
  memoryChange: number | null;
  reachable: boolean;
  /** The TTL allows more hits than today's: the in-memory hit rates are lower bounds, the memory an upper bound. */
  bound: boolean;
  sampledReads: number;
  grid: TtlGridPoint[];
  windowsNote: string | null;
  gaps: string;
};

/** GET /servers/{id}/breakdown/split: one prefix in its own pool, the rest in another. */
export type SplitPoint = { prefixBytes: number; restBytes: number; hit: number; prefixHit: number; restHit: number };
export type PoolSplit = {
  prefix: string;
  requestShare: number;
  occupancyShare: number;
  todayBytes: number;
  totalBytes: number;
  pooledHit: number;
  measuredHit: number | null;
  today: SplitPoint;
  best: SplitPoint;
  chosen: SplitPoint | null;
  gainPp: number;
  points: SplitPoint[];
  check: { diffPp: number | null; tolerancePp: number; passed: boolean | null; prefixMeasuredHit: number | null };
};
