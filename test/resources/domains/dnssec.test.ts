// presence.dnssec of GET /domains and /domains/{name} (API guide "DNSSEC (extension)"): off with
// nothing to show by default; once signed, the DS records and DNSKEYs of the zone's key, the same the
// operator's `status` shows; turned off, `disabling` with its DNSKEY and no DS; the private key never
// appears.
import { describe, expect, it } from 'vitest';
import { ENGINES, call } from '../../helpers/app.js';
import { useDomains } from '../../helpers/domains.js';

describe.each(ENGINES)('presence.dnssec on %s', (engine) => {
  const { t, x, get } = useDomains(engine);

  it('off by default; once enabled: the DS records and DNSKEYs, in the one document and in the list', async () => {
    expect((await get('flags.example')).json.data.attributes.presence.dnssec).toEqual({ enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] });
    const { status } = await t.admin.dnssec.set('flags.example', true);
    expect(status.ds_records).toEqual([expect.stringMatching(/^[0-9]{1,5} 13 2 [0-9A-F]{64}$/)]);
    const one = await get('flags.example');
    expect(one.status).toBe(200);
    expect(one.json.data.attributes.presence.dnssec).toEqual({ enabled: true, state: 'signed', ds_records: status.ds_records, dnskeys: status.dnskeys });
    const list = await call(t.app, 'GET', '/domains', { token: x.end1.token });
    const byName = Object.fromEntries((list.json.data as { id: string; attributes: { presence: { dnssec: unknown } | null } }[]).map((d) => [d.id, d.attributes.presence?.dnssec ?? null]));
    expect(byName['flags.example']).toEqual({ enabled: true, state: 'signed', ds_records: status.ds_records, dnskeys: status.dnskeys });
    expect(byName['xn--bcher-kva.example']).toEqual({ enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] });
    expect(byName['registered-only.example']).toBe(null);
    expect(one.body).not.toMatch(/PRIVATE|private/);

    // Off: still signed with its key, asking the parent (CDS delete form) to drop the DS.
    await t.admin.dnssec.set('flags.example', false);
    expect((await get('flags.example')).json.data.attributes.presence.dnssec).toEqual({ enabled: false, state: 'disabling', ds_records: [], dnskeys: status.dnskeys });
  });
});
