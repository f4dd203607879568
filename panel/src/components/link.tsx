import type { ComponentChildren } from 'preact';
import { href, onLinkClick, type Route } from '../router';

/** `label`: an accessible name that contains the visible text and says more (WCAG 2.5.3). */
export function Link(props: { to: Route; children: ComponentChildren; class?: string; label?: string; 'aria-current'?: 'page' }) {
  return (
    <a href={href(props.to)} onClick={onLinkClick} class={props.class} aria-label={props.label} aria-current={props['aria-current']}>
      {props.children}
    </a>
  );
}
