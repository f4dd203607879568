// Secrets the server must read again (webhooks' signing secrets, API guide "Webhooks"; panel
// TOTP secrets, API guide "Panel sessions (extension)"), sealed with AES-256-GCM under a key of
// WEBHOOK_SECRET_KEY or, without it, the store's own key (table webhook_keys, migration 018).
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

interface Key {
  id: string;
  key: Buffer;
}

/** Seals and opens secrets with a list of keys: the first seals, each opens what it sealed (`<key id>.<iv>.<ciphertext>.<tag>`). */
export class SecretBox {
  constructor(private readonly keys: Key[]) {}

  seal(plain: string): string {
    const { id, key } = this.keys[0];
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
    const text = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [id, iv, text, cipher.getAuthTag()].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  /** `sealed` sealed again with the first key, or null when it is sealed with that key already. */
  reseal(sealed: string): string | null {
    return sealed.split('.')[0] === this.keys[0].id ? null : this.seal(this.open(sealed));
  }

  /** The secret, or throws saying why it cannot be read (a key that is gone, a damaged value). */
  open(sealed: string): string {
    const [id, iv, text, tag] = sealed.split('.');
    const k = this.keys.find((x) => x.id === id);
    if (!k) throw new Error(`the secret is sealed with key ${id}, which this server does not have (WEBHOOK_SECRET_KEY)`);
    const decipher = crypto.createDecipheriv('aes-256-gcm', k.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(text, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** A key of WEBHOOK_SECRET_KEY is named by its hash, so a value sealed under it finds it again in any order. */
const settingKey = (base64: string): Key => ({ id: `k${crypto.hash('sha256', base64, 'hex').slice(0, 12)}`, key: Buffer.from(base64, 'base64') });

/**
 * The box of this process: WEBHOOK_SECRET_KEY's keys first (when set), then the store's own key
 * (base64, WebhooksRepository.storeKey), so secrets sealed before the setting was made still open.
 * `const box = secretBox(config.webhooks.secretKeys, await repo.storeKey())`.
 */
export const secretBox = (settingKeys: string[], storeKey: string): SecretBox =>
  new SecretBox([...settingKeys.map(settingKey), { id: 'store', key: Buffer.from(storeKey, 'base64') }]);

/** The store's own sealing key (base64; migration 018), used unless WEBHOOK_SECRET_KEY is set. */
export async function storeSealingKey(db: Kysely<Database>): Promise<string> {
  return (await db.selectFrom('webhook_keys').select('key').where('id', '=', 'store').executeTakeFirstOrThrow()).key;
}
