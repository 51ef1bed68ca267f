import type { ReactNode } from 'react';

// A list page's table: scrolls sideways inside its own box on a narrow screen (the page does not),
// named by its caption (for screen readers only; the section's heading shows it), one header per
// column. The rows are the caller's.

export function DataTable({ caption, columns, children }: { caption: string; columns: string[]; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
