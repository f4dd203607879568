// Registers every resource explicitly (DESIGN: app.ts registers each resource).
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import type { LinkBuilder } from '../jsonapi/document.js';
import { CustomersRepository } from './customers/customers.repository.js';
import { CustomersService } from './customers/customers.service.js';
import { customersRoutes } from './customers/customers.routes.js';

export interface ResourceDeps {
  config: Config;
  store: Store;
  links: LinkBuilder;
}

export function registerResources(app: FastifyInstance, { store, links }: ResourceDeps) {
  customersRoutes(app, new CustomersService(new CustomersRepository(store.db)), links);
}
