import { memo, useLayoutEffect, useRef } from "react";
import type { PageMove, SlabClass } from "../api/types";
import { drawSmallCurve } from "../charts/smallCurve";
import { useWidth } from "../hooks";
import { hitAt } from "../lib/curve";
import { formatBytes, formatPp, formatHitRate } from "../lib/format";

const pages = (n: number) => `${n} page${n === 1 ? "" : "s"}`;
const nClasses = (n: number) => `${n} class${n === 1 ? "" : "es"}`;

const SmallCurve = memo(function SmallCurve({ cls, width }: { cls: SlabClass; width: number }) {
  const svg = useRef<SVGSVGElement>(null);
  useLayoutEffect(() => {
    drawSmallCurve(svg.current!, { points: cls.points, currentBytes: cls.currentBytes }, {
      width,
      height: 84,
      margin: { top: 4, right: 4, bottom: 14, left: 4 },
    });
  }, [cls, width]);
  const hit = hitAt(cls.points, cls.currentBytes);
  return (
    <figure className="small-multiple" data-class={cls.id}>
      <figcaption>
        <strong>class {cls.id}</strong> · {formatBytes(cls.chunkSize)} chunks
        <br />
        <span className="muted">
          {pages(cls.pages)} · {hit === null ? "—" : formatHitRate(hit)} hits
        </span>
      </figcaption>
      <svg ref={svg} aria-hidden="true" />
    </figure>
  );
});

/** Per-slab-class curves, busiest first, on a grid whose cell width follows the page width. */
export function SlabClasses({
  classes,
  advice,
  adviceHitGain,
  version = null,
}: {
  classes: SlabClass[];
  advice: PageMove[];
  adviceHitGain: number | null;
  /** memcached's version, for the manual command */
  version?: string | null;
}) {
  const [box, width] = useWidth<HTMLDivElement>();
  const cols = Math.max(2, Math.floor(width / 190));
  const cell = Math.floor((width - (cols - 1) * 12) / cols);
  const sorted = [...classes].sort((a, b) => b.requests - a.requests || a.id - b.id);
  return (
    <section aria-labelledby="slab-title">
      <h2 id="slab-title">Slab classes</h2>
      <Advice advice={advice} gain={adviceHitGain} version={version} />
      <p className="muted">
        {nClasses(classes.length)}, busiest first. Each: hit rate (0–100 %) versus the class's memory; the line marks its size
        today.
      </p>
      <div ref={box} className="small-multiples" style={{ gridTemplateColumns: `repeat(${cols}, 1fr)` }}>
        {/* The figure's padding (2 × 6 px) and border (2 × 1 px) come off the drawing's width. */}
        {width > 0 && sorted.map((c) => <SmallCurve key={c.id} cls={c} width={cell - 14} />)}
      </div>
    </section>
  );
}

/** memcached before 1.6.42 can crash on a manual `slabs reassign`: offer the command from 1.6.42 on only. */
export function reassignIsSafe(version: string | null): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version ?? "");
  if (!m) return false;
  const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return a > 1 || (a === 1 && (b > 6 || (b === 6 && c >= 42)));
}

function Advice({ advice, gain, version }: { advice: PageMove[]; gain: number | null; version: string | null }) {
  if (!advice.length)
    return (
      <p className="advice none" data-testid="advice">
        Slab rebalancing: the current page allocation is already the best for this traffic.
      </p>
    );
  return (
    <div className="advice" data-testid="advice">
      <p>
        <strong>Slab rebalancing advice:</strong> move {pages(advice.reduce((s, a) => s + a.pages, 0))} of 1 MiB from{" "}
        {nClasses(new Set(advice.map((a) => a.fromClass)).size)} to {nClasses(new Set(advice.map((a) => a.toClass)).size)}
        {gain !== null && <> for {formatPp(gain)} hit rate at the same memory</>}.
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">From class</th>
            <th scope="col">To class</th>
            <th scope="col">Pages</th>
            <th scope="col">Hit-rate gain</th>
          </tr>
        </thead>
        <tbody>
          {advice.map((a, i) => (
            <tr key={i}>
              <td>{a.fromClass}</td>
              <td>{a.toClass}</td>
              <td>{a.pages}</td>
              <td>{a.hitGain === null ? "—" : formatPp(a.hitGain, 2)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted small" data-testid="advice-how">
        memcached's automover (<code>slab_reassign</code>, <code>slab_automove</code>) moves pages itself
        {reassignIsSafe(version) ? (
          <>
            ; to move one by hand:{" "}
            <code>
              slabs reassign {advice[0].fromClass} {advice[0].toClass}
            </code>
            .
          </>
        ) : (
          <>
            . Do not move pages by hand with <code>slabs reassign</code> on memcached {version ?? "of this version"}: before 1.6.42 it can
            crash memcached.
          </>
        )}
      </p>
    </div>
  );
}
