// `hostplane admin webhook list [--customer <id>]`: every customer's webhooks for the operator (API
// guide "Webhooks"), with their state — where they send, what, and whether deliveries fail — never
// their secrets; `reseal` seals every secret with the first key of WEBHOOK_SECRET_KEY.
import { Command } from 'commander';
import { SessionService } from '../../resources/session/session.service.js';
import { parseId, withStore, type CliIo } from '../context.js';
import { WebhooksService } from '../../resources/webhooks/webhooks.service.js';
import type { WebhookRow } from '../../resources/webhooks/webhooks.repository.js';
import { leaf, printList, printResult, type Json } from './views.js';

const COLUMNS = ['id', 'customer_id', 'url', 'events', 'active', 'status', 'failing_reason'];

const webhookView = (w: WebhookRow) => ({
  id: String(w.id),
  customer_id: String(w.customer_id),
  url: w.url,
  events: (JSON.parse(w.events) as string[]).join(','),
  description: w.description,
  active: w.active === 1,
  status: w.status,
  failing_reason: w.failing_reason,
  created_at: w.created_at,
});

export function webhookCommand(io: CliIo): Command {
  const cmd = new Command('webhook').description("customers' webhooks: where events are sent, and whether deliveries fail");
  leaf(cmd.command('list').description('list webhooks, all or one customer\'s (never their secrets)'))
    .option('--customer <id>', 'only this customer\'s', parseId)
    .action((o: Json & { customer?: number }) =>
      withStore(io, async (ctx) => printList(ctx.out, o, (await new WebhooksService(ctx).all(o.customer)).map(webhookView), COLUMNS)),
    );
  leaf(cmd.command('reseal').description("seal every webhook secret and every panel TOTP secret again with the first key of WEBHOOK_SECRET_KEY, so older keys can be dropped"))
    .action((o: Json) =>
      withStore(io, async (ctx) => {
        // The panel's TOTP secrets are sealed under the same keys (API guide "Panel sessions (extension)").
        const n = (await new WebhooksService(ctx).reseal()) + (await new SessionService(ctx).reseal());
        printResult(ctx.out, o, { resealed: n }, `Sealed ${n} secret${n === 1 ? '' : 's'} (webhooks, TOTP) again with the first key.\n`);
      }),
    );
  return cmd;
}
