// The form and table markup the settings pages (members, agents, reports, notification channels)
// share: one labelled choice and one table of rows with an actions column, so their markup and
// accessibility (a labelled select, scoped headers, the actions column named for screen readers)
// are written once.
import type { ReactNode } from "react";
import { TableScroll } from "./TableScroll";

/** A labelled <select> over [value, label] choices (an optional first choice, e.g. "all"). */
export function ChoiceField({
  label,
  value,
  onChange,
  choices,
  first,
  testId,
  required,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  choices: ReadonlyArray<readonly [string, string]>;
  first?: readonly [string, string];
  testId?: string;
  required?: boolean;
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)} data-testid={testId} required={required}>
        {[...(first ? [first] : []), ...choices].map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Column headers: a label, or [label, className] (e.g. "col-optional", hidden on phones). */
export type Column = string | readonly [string, string];

/** A scrollable table whose last column holds each row's actions (its header named for screen
 * readers only); the rows are the caller's. */
export function ActionsTable({
  columns,
  testId,
  className,
  children,
}: {
  columns: Column[];
  testId: string;
  className?: string;
  children: ReactNode;
}) {
  return (
    <TableScroll>
      <table className={className} data-testid={testId}>
        <thead>
          <tr>
            {columns.map((c) => {
              const [text, cls] = typeof c === "string" ? [c, undefined] : c;
              return (
                <th key={text} scope="col" className={cls}>
                  {text}
                </th>
              );
            })}
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </TableScroll>
  );
}
