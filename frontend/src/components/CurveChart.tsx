import { useLayoutEffect, useRef, useState } from "react";
import { drawCurveChart } from "../charts/curveChart";
import { useWidth } from "../hooks";
import type { Curve } from "../lib/curve";
import { formatBytes, formatHitRate } from "../lib/format";

type Props = {
  id: string;
  points: Curve;
  estimate: Curve | null;
  currentBytes: number;
  measuredHit: number | null;
  target: number | null;
  targetBytes: number | null;
  /** Past this memory nothing has been observed yet (drawn faded, labelled). */
  observedMaxBytes?: number | null;
  zoom: [number, number] | null;
  onZoom: (d: [number, number] | null) => void;
  onTarget: (t: number) => void;
};

/** React owns the <svg>; drawCurveChart owns what is inside it. */
export function CurveChart(props: Props) {
  const [box, width] = useWidth<HTMLDivElement>();
  const svg = useRef<SVGSVGElement>(null);
  const [hover, setHover] = useState<number | null>(null);
  const narrow = width < 520;
  const height = narrow ? 280 : 400;
  useLayoutEffect(() => {
    if (!width) return;
    drawCurveChart(
      svg.current!,
      {
        points: props.points,
        estimate: props.estimate,
        currentBytes: props.currentBytes,
        measuredHit: props.measuredHit,
        target: props.target,
        targetBytes: props.targetBytes,
        hoverBytes: hover,
        observedMaxBytes: props.observedMaxBytes ?? null,
      },
      {
        id: props.id,
        width,
        height,
        // bottom: the memory ticks' labels end about 20 px under the axis, the axis name's box
        // starts 24 px under it (its baseline 6 px above the chart's foot); at 34 the two touched
        margin: { top: 24, right: 52, bottom: 40, left: narrow ? 44 : 52 },
        xDomain: props.zoom,
        onTarget: props.onTarget,
        onZoom: props.onZoom,
        onHover: setHover,
      },
    );
  }, [props.points, props.estimate, props.currentBytes, props.measuredHit, props.target, props.targetBytes, props.observedMaxBytes, props.id, props.zoom, props.onTarget, props.onZoom, hover, width, height, narrow]);
  const label =
    `Hit rate versus memory: measured ${props.measuredHit === null ? "unknown" : formatHitRate(props.measuredHit)} ` +
    `at ${formatBytes(props.currentBytes)} today. The table view lists the same numbers.`;
  return (
    <div ref={box} className="chart curve-chart">
      <svg ref={svg} data-testid="curve-chart" aria-label={label} role="img" data-points={props.points.length} />
    </div>
  );
}
