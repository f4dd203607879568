// All SQL of packages (API guide "Packages"): reads only, limited to the caller's scope.
import type { Kysely, Selectable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import { OWNER_COLUMNS, tokenOwner, type OwnerColumns } from '../../auth/auth.repository.js';
import type { Database, PackagesTable } from '../../db/schema.js';
import { scopedPrecompiled, visibleTo, visibleToOwner, type ScopeOwner } from '../../db/scope.js';
import { fetchPage, type Page } from '../../db/paging.js';
import { precompiled } from '../../db/precompiled.js';

/** What a package's wire representation needs (packageResource), named (src/db/precompiled.ts). */
const COLUMNS = ['id', 'customer_id', 'plan_id', 'name', 'linux_user', 'created_at'] as const satisfies readonly (keyof PackagesTable)[];
const SELECTED = COLUMNS.map((c) => `packages.${c}` as const);

/** Where the package's web server takes SFTP logins (API guide "SSH keys"): null while it has none. */
const SFTP = ['ws.sftp_host', 'ws.sftp_port', 'ws.addresses as ws_addresses'] as const;

export type PackageRow = Pick<Selectable<PackagesTable>, (typeof COLUMNS)[number]> & {
  sftp_host: string | null;
  sftp_port: number | null;
  /** The web server's addresses (JSON), for the default SFTP host; null: no web server. */
  ws_addresses: string | null;
};

/** Filters after parsing: each given attribute holds at least one value (OR within, AND across). */
export interface PackageFilters {
  ownerIds?: number[];
  planIds?: number[];
  linuxUsers?: string[];
}

export class PackagesRepository {
  // The reads of GET /packages/{id} (also with the token check in the same statement) and of an
  // unfiltered, unpaged GET /packages, compiled once (docs/decisions/0012-request-path.md).
  private readonly byId;
  private readonly all;
  private readonly byIdWithToken;

  constructor(private readonly db: Kysely<Database>) {
    this.byId = scopedPrecompiled(db, (scope, id: number) => this.base(scope).where('packages.id', '=', id));
    this.all = scopedPrecompiled(db, (scope) => this.base(scope).orderBy('packages.id'));
    this.byIdWithToken = precompiled(db, (hash: string, id: number) => this.withToken(hash, id));
  }

  private base(actor: ScopeOwner) {
    return this.db
      .selectFrom('packages')
      .leftJoin('web_servers as ws', 'ws.name', 'packages.web_server_name')
      .select([...SELECTED, ...SFTP])
      .where(visibleTo(actor, 'packages.customer_id'));
  }

  /**
   * The owner of the token with this hash and package `id` if the owner sees it, in one
   * statement: no row when the token does not authenticate, one row with null package columns
   * when the owner does not see it (src/auth/plugin.ts TokenRead; one object only, as domains).
   */
  private withToken(hash: string, id: number) {
    return this.db
      .selectFrom(tokenOwner(this.db, hash))
      .leftJoin('packages', (j) => j.on('packages.id', '=', id).on(visibleToOwner('owner', 'packages.customer_id')))
      .leftJoin('web_servers as ws', 'ws.name', 'packages.web_server_name')
      .select([...OWNER_COLUMNS, ...SELECTED, ...SFTP]);
  }

  findVisible(actor: Actor, id: number) {
    return this.byId.first(actor, id);
  }

  /** GET /packages/{id} with its token check: the token's owner and the package, if the owner sees it. */
  findVisibleWithToken(hash: string, id: number) {
    return this.byIdWithToken.all(hash, id) as Promise<(OwnerColumns & Partial<PackageRow>)[]>;
  }

  async list(actor: Actor, f: PackageFilters, page: Page | null) {
    if (!f.ownerIds && !f.planIds && !f.linuxUsers && !page) {
      const rows = await this.all.all(actor);
      return { rows, total: rows.length };
    }
    let q = this.base(actor);
    if (f.ownerIds) q = q.where('packages.customer_id', 'in', f.ownerIds);
    if (f.planIds) q = q.where('packages.plan_id', 'in', f.planIds);
    if (f.linuxUsers) q = q.where('packages.linux_user', 'in', f.linuxUsers);
    return fetchPage(q.orderBy('packages.id'), page);
  }
}
