// A QR code as an inline SVG (docs/decisions/0030-panel-sessions.md: the page renders the otpauth
// URI, the server ships no QR library). uqr computes the modules; the SVG is built from them as
// elements — one path, presentation attributes only — so the strict CSP (no inline style) holds.
import { encode } from 'uqr';

/** The path of the dark modules, one 1×1 square each, in module units. */
export function qrPath(text: string): { size: number; d: string } {
  // Border 4: the quiet zone scanners need; ecc M: the usual level for a code on a screen.
  const { size, data } = encode(text, { ecc: 'M', border: 4 });
  let d = '';
  data.forEach((row, y) => row.forEach((dark, x) => dark && (d += `M${x} ${y}h1v1h-1z`)));
  return { size, d };
}

export function QrCode(props: { text: string; label: string; id?: string }) {
  const { size, d } = qrPath(props.text);
  return (
    <svg class="qr" id={props.id} role="img" aria-label={props.label} viewBox={`0 0 ${size} ${size}`} width={size * 5} height={size * 5} shape-rendering="crispEdges">
      <rect width={size} height={size} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}
