// Postfix's policy delegation protocol (Postfix SMTPD_POLICY_README): a request is `name=value`
// lines ended by an empty line; the answer is `action=<access(5) action>` and an empty line. One
// connection carries any number of requests, one after the other.

/** One request's attributes; a name Postfix sends twice keeps its last value. */
export type PolicyRequest = Record<string, string>;

/** A request longer than this is no Postfix request (its longest values are addresses and host names). */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** The peer broke the protocol; the connection is closed (Postfix opens a new one). */
export class PolicyProtocolError extends Error {}

/**
 * Splits a connection's bytes into requests: `const r = new PolicyReader(); for (const q of
 * r.push(chunk)) …`. Lines end with LF (a CR before it is dropped); a line without `=` is an error.
 */
export class PolicyReader {
  private buffered = '';
  private attrs: PolicyRequest = {};
  private size = 0;

  push(chunk: string): PolicyRequest[] {
    this.buffered += chunk;
    const done: PolicyRequest[] = [];
    for (let nl = this.buffered.indexOf('\n'); nl >= 0; nl = this.buffered.indexOf('\n')) {
      const line = this.buffered.slice(0, nl).replace(/\r$/, '');
      this.buffered = this.buffered.slice(nl + 1);
      this.size += nl + 1;
      if (this.size > MAX_REQUEST_BYTES) throw new PolicyProtocolError(`a request longer than ${MAX_REQUEST_BYTES} bytes`);
      if (line === '') {
        if (Object.keys(this.attrs).length) done.push(this.attrs);
        this.attrs = {};
        this.size = 0;
        continue;
      }
      const eq = line.indexOf('=');
      if (eq <= 0) throw new PolicyProtocolError(`not an attribute line: ${JSON.stringify(line.slice(0, 80))}`);
      this.attrs[line.slice(0, eq)] = line.slice(eq + 1);
    }
    if (this.size + this.buffered.length > MAX_REQUEST_BYTES) throw new PolicyProtocolError(`a request longer than ${MAX_REQUEST_BYTES} bytes`);
    return done;
  }
}

/** The answer to one request: `policyAnswer('DUNNO')` → "action=DUNNO\n\n". */
export function policyAnswer(action: string): string {
  // A line break would end the answer early and make the rest a second one.
  return `action=${action.replace(/[\r\n]+/g, ' ')}\n\n`;
}
