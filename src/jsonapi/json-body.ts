// Request bodies: JSON text → value, refusing what no route can take before anything walks it.
// One loop over the text, no recursion, so a body nested 10,000 levels deep costs one pass and
// answers 400 instead of overflowing a stack.
import { AppError } from '../errors.js';

/** Arrays and objects inside one another; a JSON:API body needs fewer than ten levels. */
export const MAX_BODY_DEPTH = 64;

/** Whether `text` nests arrays and objects deeper than MAX_BODY_DEPTH or escapes a NUL (`\u0000`) in a string or key. */
function scan(text: string): { tooDeep: boolean; nul: boolean } {
  let depth = 0;
  let nul = false;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') {
        if (text.startsWith('u0000', i + 1)) nul = true;
        i++; // the escaped character never opens or closes anything
      } else if (c === '"') {
        inString = false;
      }
    } else if (c === '"') {
      inString = true;
    } else if (c === '[' || c === '{') {
      if (++depth > MAX_BODY_DEPTH) return { tooDeep: true, nul };
    } else if (c === ']' || c === '}') {
      depth--;
    }
  }
  return { tooDeep: false, nul };
}

/**
 * Parses a request body; an empty one is `undefined`. Throws 400 bad_request for text nested too
 * deeply, malformed JSON, or a NUL character (no attribute takes one and PostgreSQL cannot store
 * one in text). `parseJsonBody('{"data":{}}')` → `{ data: {} }`.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  const { tooDeep, nul } = scan(text);
  if (tooDeep) {
    throw new AppError('bad_request', `The JSON body is nested too deeply: at most ${MAX_BODY_DEPTH} levels of arrays and objects are allowed.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // A SyntaxError names the position; anything else (a RangeError the depth bound should
    // prevent) still answers 400, never 500.
    const why = err instanceof SyntaxError ? err.message : 'the text cannot be parsed';
    throw new AppError('bad_request', `Malformed JSON: ${why}`);
  }
  if (nul) throw new AppError('bad_request', 'Strings must not contain NUL characters (\\u0000).');
  return parsed;
}
