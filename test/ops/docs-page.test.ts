// The docs page (/docs/, docs/decisions/0006-openapi.md) in headless Chromium: the document's
// description, every operation and schema rendered (required in CI, where Chromium is installed).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, createTestApp, type TestApp } from '../helpers/app.js';
import { filledLater } from '../helpers/suite.js';
import { requirable } from '../helpers/required.js';
import { operations } from '../helpers/openapi.js';

/** The Chromium binary on PATH, or null. */
function findChromium(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const file = path.join(dir, 'chromium');
    if (dir && fs.existsSync(file)) return file;
  }
  return null;
}

const chromium = findChromium();

requirable(chromium ? null : 'chromium is not installed (apt-get install chromium)')('the docs page in headless Chromium', () => {
  const t = filledLater<TestApp>();
  let origin = '';
  let doc: any;
  let profile = '';
  beforeAll(async () => {
    Object.assign(t, await createTestApp('sqlite'));
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address() as { port: number };
    origin = `http://127.0.0.1:${address.port}`;
    doc = (await call(t.app, 'GET', '/openapi.json')).json;
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-chromium-'));
  });
  afterAll(async () => {
    await t.close?.();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
  });

  /** The page's DOM after its scripts ran, as text: tags dropped, entities decoded, spaces folded. */
  async function renderedText(url: string) {
    const { stdout } = await promisify(execFile)(
      chromium!,
      ['--headless', '--no-sandbox', '--disable-gpu', `--user-data-dir=${profile}`, '--virtual-time-budget=10000', '--dump-dom', url],
      { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
    );
    const text = stdout
      .replace(/<[^>]+>/g, ' ')
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&')
      .replace(/\s+/g, ' ');
    return { dom: stdout, text };
  }

  it('renders the description, every operation and every schema of the document', async () => {
    const { dom, text } = await renderedText(`${origin}/docs/`);
    expect(text).not.toContain('Failed to load API definition');
    expect(dom).not.toContain('errors-wrapper');
    expect(text).toContain('hostplane — Customer Hosting Management API');
    expect(text).toContain('Available: customers, domains, packages, plans, queue-jobs, dns-records, domain-availability, subdomains, databases, email-addresses, ssh-keys, webhooks, audit-events, session.');
    expect(text).not.toContain('Not available yet');
    for (const o of operations(doc)) expect(text, o.key).toContain(o.op.summary);
    const schemas = Object.keys(doc.components.schemas);
    const shown = [...dom.matchAll(/json-schema-2020-12__title">([^<]+)</g)].map((m) => m[1]);
    expect(shown).toEqual(schemas);
  }, 90_000);

  it('shows an operation\'s request example and its documented answers', async () => {
    const { text } = await renderedText(`${origin}/docs/#/dns-records/createDnsRecord`);
    expect(text).toContain('"record_type" : "TXT"');
    expect(text).toContain('"ttl" : 300');
    for (const status of Object.keys(doc.paths['/dns-records'].post.responses)) expect(text).toContain(` ${status} `);
    expect(text).toContain('Content-Location');
    expect(text).toContain('conflict : the record clashes with existing records');
  }, 90_000);

  it('shows a 204 answer by its description alone', async () => {
    const { text } = await renderedText(`${origin}/docs/#/email-addresses/addForwardTarget`);
    expect(text).toContain(' 204 Added: mail is forwarded there from now on');
    expect(text).toContain('orders+shop@shop-demo.example');
  }, 90_000);
});
