// Each page's h1: names the document, and after an in-page navigation takes the focus, so a
// keyboard or screen-reader user starts at the new page's top (WCAG 2.4.3), not on the old link.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { navigations } from '../router';

export function PageHeading(props: { title: string; children?: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} – hostplane`;
  }, [props.title]);
  useEffect(() => {
    if (navigations > 0) ref.current?.focus();
  }, []);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {props.children ?? props.title}
    </h1>
  );
}
