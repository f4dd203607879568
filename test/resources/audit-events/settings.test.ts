// The audit trail's settings (docs/operator-guide.md "Settings"; docs/decisions/0029-audit-trail.md):
// AUDIT_LOG on or off, AUDIT_RETENTION_DAYS a whole number of days from 1; 0 is refused rather than
// read as "keep none" or "keep all", and every problem is reported with the others.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';

const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    return (err as ConfigError).problems;
  }
};

describe('AUDIT_LOG, AUDIT_RETENTION_DAYS', () => {
  it('default on and 90 days; off and any number of days from 1', () => {
    expect(loadConfig({}).audit).toEqual({ enabled: true, retentionDays: 90 });
    expect(loadConfig({ AUDIT_LOG: 'off', AUDIT_RETENTION_DAYS: '1' }).audit).toEqual({ enabled: false, retentionDays: 1 });
    expect(loadConfig({ AUDIT_LOG: 'on', AUDIT_RETENTION_DAYS: '36500' }).audit).toEqual({ enabled: true, retentionDays: 36500 });
  });

  it('refuses another word, 0, too many days and what is no number, each with the other problems', () => {
    expect(problems({ AUDIT_LOG: 'no', AUDIT_RETENTION_DAYS: '0', PORT: '0' })).toEqual([
      'AUDIT_LOG: must be one of on, off',
      'PORT: must be 1..65535',
      'AUDIT_RETENTION_DAYS: must be 1..36500 (AUDIT_LOG=off records nothing)',
    ]);
    expect(problems({ AUDIT_RETENTION_DAYS: '36501' })).toEqual(['AUDIT_RETENTION_DAYS: must be 1..36500 (AUDIT_LOG=off records nothing)']);
    expect(problems({ AUDIT_RETENTION_DAYS: '-1' })).toContain('AUDIT_RETENTION_DAYS: must match pattern "^[0-9]+$"');
  });
});
