// A mail client submitting as a real one does (API guide "Sending mail"): Python's smtplib, with
// STARTTLS (port 587), implicit TLS (465) or no TLS at all, AUTH, one message. What the server
// answered at the step it stopped is returned, so a test asserts a refusal as the client sees it.
import { spawn } from 'node:child_process';
import { call } from './app.js';

export interface Submission {
  /** host:port */
  addr: string;
  mode: 'starttls' | 'tls' | 'plain';
  /** The certificate (or CA) to trust; the host name (or IP) is checked against it. */
  ca: string;
  user: string;
  password: string;
  from: string;
  to: string[];
  message: string;
}

export type SubmissionResult =
  | { ok: true; refused: Record<string, [number, string]> }
  | { ok: false; stage: 'connect' | 'starttls' | 'auth' | 'mail' | 'rcpt' | 'data'; code: number | null; text: string; offered?: boolean };

const SCRIPT = String.raw`
import json, smtplib, ssl, sys
a = json.load(sys.stdin)
host, port = a['addr'].rsplit(':', 1)
ctx = ssl.create_default_context(cafile=a['ca'])
stage = 'connect'
def out(o):
    print(json.dumps(o)); sys.exit(0)
try:
    if a['mode'] == 'tls':
        s = smtplib.SMTP_SSL(host, int(port), context=ctx, timeout=30)
    else:
        s = smtplib.SMTP(host, int(port), timeout=30)
    s.ehlo('client.example')
    if a['mode'] == 'starttls':
        stage = 'starttls'
        s.starttls(context=ctx)
        s.ehlo('client.example')
    stage = 'auth'
    if a['mode'] == 'plain':
        # What a careless client does: AUTH PLAIN in clear, whether the server offers AUTH or not.
        import base64
        token = base64.b64encode(('\0' + a['user'] + '\0' + a['password']).encode()).decode()
        code, text = s.docmd('AUTH', 'PLAIN ' + token)
        if code != 235:
            out({'ok': False, 'stage': 'auth', 'code': code, 'text': text.decode(), 'offered': s.has_extn('auth')})
    else:
        s.login(a['user'], a['password'])
    stage = 'mail'
    refused = s.sendmail(a['from'], a['to'], a['message'].encode())
    s.quit()
    out({'ok': True, 'refused': {k: [v[0], v[1].decode()] for k, v in refused.items()}})
except smtplib.SMTPRecipientsRefused as e:
    out({'ok': False, 'stage': 'rcpt', 'code': list(e.recipients.values())[0][0], 'text': list(e.recipients.values())[0][1].decode()})
except smtplib.SMTPSenderRefused as e:
    out({'ok': False, 'stage': 'mail', 'code': e.smtp_code, 'text': e.smtp_error.decode()})
except smtplib.SMTPDataError as e:
    out({'ok': False, 'stage': 'data', 'code': e.smtp_code, 'text': e.smtp_error.decode()})
except smtplib.SMTPResponseException as e:
    out({'ok': False, 'stage': stage, 'code': e.smtp_code, 'text': e.smtp_error.decode()})
except Exception as e:
    out({'ok': False, 'stage': stage, 'code': None, 'text': type(e).__name__ + ': ' + str(e)})
`;

/** Runs `script` with Debian's python3 (whose packages, python3-dkim, the checks use), `input` as JSON on stdin; its JSON answer. */
function python<T>(script: string, input: unknown, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const py = spawn('/usr/bin/python3', ['-c', script], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    py.stdout.on('data', (d) => (stdout += d));
    py.stderr.on('data', (d) => (stderr += d));
    py.on('error', reject);
    py.on('close', () => {
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new Error(`${what}: ${stdout}${stderr}`));
      }
    });
    py.stdin.end(JSON.stringify(input));
  });
}

/** `await submit({ addr, mode: 'starttls', ca, user, password, from: user, to: [b], message })`. */
export const submit = (s: Submission): Promise<SubmissionResult> => python(SCRIPT, s, 'smtplib client');

const VERIFY = String.raw`
import dkim, json, re, sys
a = json.load(sys.stdin)
msg = a['message'].encode()
def dnsfunc(name, timeout=5):
    return a['txt'].get(name.decode().rstrip('.').lower(), '').encode()
sigs = re.findall(rb'^DKIM-Signature:(.*(?:\r?\n[ \t].*)*)', msg, re.M | re.I)
tags = [dict(t.strip().split('=', 1) for t in re.sub(rb'\s+', b'', s).decode().split(';') if '=' in t) for s in sigs]
print(json.dumps({'verified': bool(sigs) and dkim.verify(msg, dnsfunc=dnsfunc), 'signatures': [{'d': t.get('d'), 's': t.get('s')} for t in tags]}))
`;

/**
 * Checks a received message's DKIM-Signature with Debian's python3-dkim (dkimpy), the TXT records
 * given by name (`{ 'default._domainkey.d.example': 'v=DKIM1; …' }`, what the DNS server serves).
 */
export const verifyDkim = (message: string, txt: Record<string, string>): Promise<{ verified: boolean; signatures: Array<{ d: string; s: string }> }> =>
  python(VERIFY, { message, txt }, 'dkim check');

/** The DKIM TXT records of `domain` by name, as the API lists them (what its DNS server serves): for verifyDkim. */
export async function publishedDkim(app: Parameters<typeof call>[0], token: string, domain: string): Promise<Record<string, string>> {
  const r = await call(app, 'GET', `/dns-records?filter[domain]=${domain}`, { token });
  return Object.fromEntries(
    r.json.data
      .filter((d: { attributes: { name: string } }) => d.attributes.name.endsWith('._domainkey'))
      .map((d: { attributes: { name: string; data: string } }) => [`${d.attributes.name}.${domain}`, d.attributes.data]),
  );
}
