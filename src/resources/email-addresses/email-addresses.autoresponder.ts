// The autoresponder's dates (API guide "E-mail addresses";
// docs/decisions/0011-antispam-and-autoresponder.md): `activates` switches it on and `expires`
// switches it off at 00:00 Europe/Berlin of that date, and a reached date is cleared. A scheduled
// job applies them every minute, so the API shows the new state within a minute of midnight (the
// mail server's script carries its own exact date guard). The clock is a parameter: tests stand on
// either side of a midnight, DST changes included.
import type { Store } from '../../db/index.js';
import { berlinToday } from './email-addresses.rules.js';
import { EmailAddressesRepository } from './email-addresses.repository.js';
import { MailDirectoryRepository } from './email-addresses.mail-directory.repository.js';
import { mailboxSieve } from './email-addresses.sieve.js';

/** What one turn changed: how many autoresponders it switched on and off. */
export interface AutoresponderTurn {
  activated: number;
  expired: number;
}

/**
 * Applies every date that is reached at `now` (Berlin): `activates` → active, `expires` → inactive,
 * each date cleared. Both reached (a worker was down over both) ends inactive, as the later of the
 * two (`expires` is never before `activates`) decides. `await autoresponderTurn(store, new Date())`.
 */
export async function autoresponderTurn(store: Store, now: Date): Promise<AutoresponderTurn> {
  const today = berlinToday(now);
  return store.db.transaction().execute(async (trx) => {
    const repo = new EmailAddressesRepository(trx);
    const activated = await repo.reachAutoresponderDate('activates', today);
    const expired = await repo.reachAutoresponderDate('expires', today);
    // The scripts follow (a reached date's guard goes), so the directory says what the API says.
    const dir = new MailDirectoryRepository(trx);
    for (const row of new Map([...activated, ...expired].map((r) => [r.id, r])).values()) await dir.setSieve(row.address, row.mail_server_name, mailboxSieve(row));
    return { activated: activated.length, expired: expired.length };
  });
}

/**
 * Writes the Sieve script of mailboxes that have none yet (made before the scripts came in), a
 * batch per turn, so an existing installation files spam and answers as its mailboxes say without
 * an operator step. Answers how many it wrote.
 */
export async function writeMissingScripts(store: Store, batch = 500): Promise<number> {
  return store.db.transaction().execute(async (trx) => {
    const dir = new MailDirectoryRepository(trx);
    const rows = await dir.mailboxesWithoutSieve(batch);
    for (const row of rows) await dir.setSieve(row.address, row.mail_server_name, mailboxSieve(row));
    return rows.length;
  });
}
