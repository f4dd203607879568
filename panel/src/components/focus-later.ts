/** Focuses the element with `id` once the page has rendered the change that shows it. */
export const focusLater = (id: string) => setTimeout(() => document.getElementById(id)?.focus(), 0);
