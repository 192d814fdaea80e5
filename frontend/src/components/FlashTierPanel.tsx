import type { FlashTier } from "../api/types";
import { formatBytes, formatPercent } from "../lib/format";
import { keepFlags } from "./TargetAnswer";

const perSecond = (n: number | null) => (n === null ? "—" : `${Math.round(n).toLocaleString("en-US")}/s`);
const bytesPerSecond = (n: number | null) => (n === null ? "—" : `${formatBytes(n)}/s`);

/** A server's flash tier (memcached's extstore): how big and how full, the RAM its headers take,
 * the share of hits it served, its read and write rates, and, in the API's words, what the curve
 * means on such a server (the answers say the same: SizingAnswer.flash_note). */
export function FlashTierPanel({ tier }: { tier: FlashTier }) {
  return (
    <section className="flash-tier card" aria-labelledby="flash-tier-title" data-testid="flash-tier">
      <h2 id="flash-tier-title">Flash tier (extstore)</h2>
      <p data-testid="flash-note">{keepFlags(tier.note)}</p>
      <dl className="facts">
        <div>
          <dt>Flash</dt>
          <dd>
            {formatBytes(tier.limitBytes)} · {formatPercent(tier.fillRatio)} full · {formatBytes(tier.bytesUsed)} live
          </dd>
        </div>
        <div>
          <dt>Headers in RAM</dt>
          <dd>
            {tier.headerItems.toLocaleString("en-US")} items · {formatBytes(tier.headerBytes)}
          </dd>
        </div>
        <div>
          <dt>Hits from flash</dt>
          <dd>
            {tier.flashHitShare === null ? "—" : formatPercent(tier.flashHitShare)}
            {tier.flashMissShare !== null && tier.flashMissShare > 0 && (
              <> · flash reads that missed {formatPercent(tier.flashMissShare)} (memcached counts them as hits)</>
            )}
          </dd>
        </div>
        <div>
          <dt>Flash reads</dt>
          <dd>
            {perSecond(tier.readsPerS)} · {bytesPerSecond(tier.readBytesPerS)}
          </dd>
        </div>
        <div>
          <dt>Flash writes</dt>
          <dd>
            {perSecond(tier.writesPerS)} · {bytesPerSecond(tier.writeBytesPerS)}
          </dd>
        </div>
      </dl>
      <p className="muted small">
        Over the newest {tier.windows} window{tier.windows === 1 ? "" : "s"}.
      </p>
    </section>
  );
}
