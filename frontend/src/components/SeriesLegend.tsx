import type { Series } from "../charts/multiCurveChart";

/** The colour key of a multi-curve chart: one entry per series, in its colour. */
export function SeriesLegend({ series }: { series: Pick<Series, "key" | "label" | "color">[] }) {
  return (
    <ul className="legend">
      {series.map((s) => (
        <li key={s.key} style={{ ["--c" as string]: s.color }} className="lg-series">
          {s.label}
        </li>
      ))}
    </ul>
  );
}
