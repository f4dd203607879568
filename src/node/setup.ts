// `hostplane node setup`: checks the host, installs what the roles need and applies each role
// (docs/decisions/0018-nodes-on-debian.md "One command per node"). Every step converges, so a second
// run changes nothing that is right.
import { dbRole } from './roles/db.js';
import { NEEDS, type Role } from './roles.js';
import { preflightProblems, readHost, type SetupOptions } from './preflight.js';
import { ensurePackages, type Log } from './system.js';
import type { NodeContext } from './context.js';

interface RoleSteps {
  /** Runs after the role's packages (roles.ts) are installed. */
  apply(ctx: NodeContext, log: Log): Promise<void>;
}

/** The roles built so far; the others are refused by name before anything changes. */
const BUILT: Partial<Record<Role, RoleSteps>> = { db: dbRole };

/** The setup could not start; nothing was changed. */
export class SetupRefused extends Error {
  constructor(readonly problems: string[]) {
    super(`nothing was changed:\n  - ${problems.join('\n  - ')}`);
  }
}

export async function nodeSetup(o: SetupOptions, log: Log): Promise<void> {
  const notYet = o.roles.filter((r) => !BUILT[r]);
  const problems = [
    ...preflightProblems(await readHost(), o),
    ...(notYet.length ? [`the role${notYet.length > 1 ? 's' : ''} ${notYet.join(', ')} cannot be set up by this version yet (available: ${Object.keys(BUILT).join(', ')})`] : []),
  ];
  if (problems.length) throw new SetupRefused(problems);
  const ctx: NodeContext = { roles: o.roles, name: o.name, shortName: o.name.split('.')[0], store: o.store! };
  await ensurePackages([...new Set(o.roles.flatMap((r) => NEEDS[r].packages))], log);
  for (const role of o.roles) {
    log(`role ${role}`);
    await BUILT[role]!.apply(ctx, log);
  }
  log(`${o.name} is set up as ${o.roles.join(', ')}`);
}
