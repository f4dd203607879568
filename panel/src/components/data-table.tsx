// A list as a table: column headers, a caption for screen readers, and at phone width one block
// per row whose cells carry their column's name (data-label, styles.css).
import type { ComponentChildren } from 'preact';

export function DataTable(props: { caption: string; columns: string[]; class?: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table class={props.class ? `stack ${props.class}` : 'stack'}>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col" key={c}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
