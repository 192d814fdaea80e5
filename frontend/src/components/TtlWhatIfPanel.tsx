import { useState } from "react";
import { getTtlWhatIf } from "../api/endpoints";
import type { PrefixRow, TtlWhatIf } from "../api/types";
import { useAsync, useDebounced } from "../hooks";
import { formatBytes, formatHitRate } from "../lib/format";
import { Fetched } from "./States";

// The TTLs the agent replays today (profiler-agent/src/core/ttlwhatif.h); the API answers 422
// outside the grid the window carries, this only keeps obvious typos from being sent.
const TTL_MIN = 1;
const TTL_MAX = 65536;

/** The TTL what-if: a prefix's TTL changed to X seconds, its hit rate and the server's,
 * and the memory it needs for today's hit rate; the model is the backend's (hitcurve/breakdown/ttlwhatif.py). */
export function TtlWhatIfPanel({ id, prefixes }: { id: string; prefixes: PrefixRow[] }) {
  const names = prefixes.filter((p) => !p.other && p.ttlWhatIf).map((p) => p.prefix);
  const [prefix, setPrefix] = useState(names[0] ?? "");
  const [text, setText] = useState("60");
  const typed = Number(text);
  const valid = Number.isInteger(typed) && typed >= TTL_MIN && typed <= TTL_MAX;
  const ttl = useDebounced(valid ? typed : null, 400);
  const a = useAsync((signal) => (ttl == null ? Promise.resolve(null) : getTtlWhatIf(id, prefix, ttl, signal)), [id, prefix, ttl]);
  if (!names.length) return null;
  return (
    <section className="card" data-testid="ttl-whatif">
      <h2>Change a prefix&apos;s TTL</h2>
      <p className="muted small">
        If every item of the prefix were stored with another TTL: its hit rate and the server&apos;s, and the memory it would
        need for the hit rate it has today. From the agent&apos;s replay of the prefix&apos;s reads and stores at other TTLs.
      </p>
      <div className="split-controls">
        <label>
          Prefix{" "}
          <select value={prefix} aria-label="Prefix whose TTL to change" onChange={(e) => setPrefix(e.target.value)}>
            {names.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <label>
          TTL{" "}
          <input
            type="number"
            min={TTL_MIN}
            max={TTL_MAX}
            step={1}
            value={text}
            aria-label="New TTL, seconds"
            aria-invalid={!valid}
            style={{ width: "7rem" }}
            onChange={(e) => setText(e.target.value)}
          />{" "}
          s
        </label>
      </div>
      {!valid ? (
        <p className="warning-note" role="status" data-testid="ttl-invalid">
          A TTL is a whole number of seconds from {TTL_MIN} to {TTL_MAX} (memcached takes whole seconds).
        </p>
      ) : (
        <Fetched result={a} what="TTL what-if">
          {(d) => (d ? <Answer d={d} /> : null)}
        </Fetched>
      )}
    </section>
  );
}

function signed(bytes: number): string {
  return `${bytes >= 0 ? "+" : "−"}${formatBytes(Math.abs(bytes))}`;
}

function Answer({ d }: { d: TtlWhatIf }) {
  const p = <code>{d.prefix}</code>;
  const least = d.bound ? "at least " : "";
  return (
    <div>
      <p data-testid="ttl-hit">
        With a TTL of {d.ttl} s, {p} would hit {least}
        <strong>{formatHitRate(d.prefixHit)}</strong> in the{" "}
        {formatBytes(d.heldBytes)} it holds today (today {formatHitRate(d.measuredHit)})
        {d.serverHit != null && d.serverMeasuredHit != null && (
          <>
            ; the server {least}
            <strong>{formatHitRate(d.serverHit)}</strong> (today {formatHitRate(d.serverMeasuredHit)})
          </>
        )}
        .
      </p>
      <p data-testid="ttl-memory">
        {d.reachable && d.memoryForTodayHit != null ? (
          <>
            For today&apos;s {formatHitRate(d.measuredHit)} it would need {d.bound ? "at most " : ""}
            <strong>{formatBytes(d.memoryForTodayHit)}</strong>
            {d.memoryChange != null && <> ({signed(d.memoryChange)} against today)</>}.
          </>
        ) : (
          <>
            Today&apos;s {formatHitRate(d.measuredHit)} is out of reach at {d.ttl} s: that TTL allows {p} at most{" "}
            {formatHitRate(d.allowedHit)} with any memory.
          </>
        )}
      </p>
      <p className="muted small" data-testid="ttl-unbounded">
        With memory for every live item: {d.ttl} s allows {formatHitRate(d.allowedHit)} in {formatBytes(d.liveBytes)} of live
        items; today&apos;s TTLs allow {formatHitRate(d.allowedHitToday)} in {formatBytes(d.liveBytesToday)}
        {d.serverHitUnbounded != null && <> (server {formatHitRate(d.serverHitUnbounded)})</>}. From{" "}
        {d.sampledReads.toLocaleString("en")} sampled reads. The memory answer assumes the new TTL thins {p}&apos;s reuses
        evenly across memory sizes, and that a miss is refilled by the client (cache-aside); {d.gaps.split(";")[0]}.
      </p>
    </div>
  );
}
