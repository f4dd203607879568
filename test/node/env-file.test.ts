// hostplane.env as `node setup` keeps it (decision 0018 "One command per node"): the settings it owns
// are rewritten where they stand, the operator's own lines stay, `--set` adds or changes one, and a
// setting hostplane would refuse is named before anything is written. The installed units carry the
// node's paths and hostplane's version.
import { describe, expect, it } from 'vitest';
import { mergeEnv, parseSets, readEnv, settingsProblems } from '../../src/node/env-file.js';
import { unitText } from '../../src/node/units.js';

const HEADER = '# Written by hostplane node setup; the settings it owns are rewritten on its next run, your own lines are kept.';

describe('mergeEnv', () => {
  it('a new file: the header, then the owned settings and the --set ones, values quoted only when needed', () => {
    expect(mergeEnv('', { DATABASE_URL: 'postgres://h:pw@127.0.0.1:5432/hostplane', PORT: '8080' }, { BRAND_WORDS: 'acme hosting,acme' })).toBe(
      `${HEADER}\nDATABASE_URL=postgres://h:pw@127.0.0.1:5432/hostplane\nPORT=8080\nBRAND_WORDS="acme hosting,acme"\n`,
    );
  });

  it("a second run: owned lines rewritten in place, the operator's comments and settings kept, a duplicate dropped; the same input gives the same text", () => {
    const before = `${HEADER}\n# mine\nLOG_LEVEL=debug\nPORT=9999\nRATE_LIMIT_MAX=50\nPORT=1\n`;
    const after = mergeEnv(before, { PORT: '8080' }, {});
    expect(after).toBe(`${HEADER}\n# mine\nLOG_LEVEL=debug\nPORT=8080\nRATE_LIMIT_MAX=50\n`);
    expect(mergeEnv(after, { PORT: '8080' }, {})).toBe(after);
    expect(readEnv(mergeEnv(after, { PORT: '8080' }, { LOG_LEVEL: 'warn' }))).toEqual({ LOG_LEVEL: 'warn', PORT: '8080', RATE_LIMIT_MAX: '50' });
  });

  it('quotes what a shell or systemd would read otherwise, and reads it back', () => {
    const text = mergeEnv('', { BRAND_WORDS: 'a "b" $c `d` \\e' }, {});
    expect(text).toContain('BRAND_WORDS="a \\"b\\" \\$c \\`d\\` \\\\e"\n');
    expect(readEnv(text)).toEqual({ BRAND_WORDS: 'a "b" $c `d` \\e' });
  });
});

describe('--set and the settings check', () => {
  it('unknown names and words without = are refused, each named', () => {
    expect(parseSets(['LOG_LEVEL=debug', 'NO_SUCH=1', 'oops'])).toEqual({
      set: { LOG_LEVEL: 'debug' },
      problems: ['--set NO_SUCH: not a setting (docs/operator-guide.md "Settings")', '--set "oops": expected NAME=value'],
    });
  });

  it('what hostplane would refuse at start is said before anything is written', () => {
    expect(settingsProblems({ DATABASE_URL: 'postgres://h@x/hostplane', LOG_LEVEL: 'loud' })).toEqual([expect.stringMatching(/^LOG_LEVEL: must be one of/)]);
    expect(settingsProblems({ DATABASE_URL: 'postgres://h@x/hostplane', ACME_DIRECTORY: 'http://plain.example/dir' })).toEqual([expect.stringMatching(/^ACME_DIRECTORY: /)]);
    expect(settingsProblems({ DATABASE_URL: 'postgres://h@x/hostplane', WEB_API_UPSTREAM: '127.0.0.1:8080' })).toEqual([]);
  });
});

describe('unitText', () => {
  it("points ExecStart and the documentation at this host's node and package, and names the version", () => {
    const template = 'Documentation=file:/opt/hostplane/docs/operator-guide.md\nExecStart=/usr/bin/node /opt/hostplane/dist/main.js serve\n';
    expect(unitText(template, { node: '/usr/bin/node', pkg: '/usr/local/lib/node_modules/hostplane', version: '1.2.3' })).toBe(
      '# Installed by hostplane node setup from hostplane 1.2.3; replaced on its next run.\n' +
        'Documentation=file:/usr/local/lib/node_modules/hostplane/docs/operator-guide.md\n' +
        'ExecStart=/usr/bin/node /usr/local/lib/node_modules/hostplane/dist/main.js serve\n',
    );
  });
});
