import { globSync } from 'node:fs';
import path from 'node:path';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ALLOW_END_USERS, IS_PUBLIC } from '../../src/auth/principal';
import { buildOpenApiDocument } from '../../src/openapi/document';

interface Route {
  method: string;
  path: string;
  public: boolean;
  endUsers: boolean;
}

const normalise = (p: string) => p.replace(/\{[^}]+\}|:[^/]+/g, '{}').replace(/\/+/g, '/').replace(/(.)\/$/, '$1');

/** Every route of every controller, with what AuthGuard reads of it (the handler's metadata over its class's). */
function controllerRoutes(): Route[] {
  const root = path.join(__dirname, '../../src');
  const routes: Route[] = [];
  for (const file of globSync('**/*.controller.ts', { cwd: root })) {
    for (const exported of Object.values(require(path.join(root, file)) as Record<string, unknown>)) {
      if (typeof exported !== 'function' || Reflect.getMetadata(PATH_METADATA, exported) === undefined) continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, exported));
      for (const name of Object.getOwnPropertyNames(exported.prototype)) {
        const handler = exported.prototype[name];
        const method = typeof handler === 'function' ? Reflect.getMetadata(METHOD_METADATA, handler) : undefined;
        if (method === undefined) continue;
        const read = (key: string) => Reflect.getMetadata(key, handler) ?? Reflect.getMetadata(key, exported);
        routes.push({
          method: RequestMethod[method as RequestMethod].toLowerCase(),
          path: normalise(`/api/${base}/${String(Reflect.getMetadata(PATH_METADATA, handler))}`),
          public: read(IS_PUBLIC) === true,
          endUsers: read(ALLOW_END_USERS) === true,
        });
      }
    }
  }
  return routes;
}

describe('the 403 an end-user token gets, in the OpenAPI document', () => {
  const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>> };
  const operations = new Map(Object.entries(doc.paths).flatMap(([p, ops]) => Object.entries(ops).map(([m, op]) => [`${m} ${normalise(p)}`, op] as const)));
  const documented = controllerRoutes().filter((r) => operations.has(`${r.method} ${r.path}`));

  it('finds the controllers behind the documented operations', () => {
    expect(documented.length).toBeGreaterThan(40);
    expect(documented.some((r) => r.endUsers)).toBe(true);
  });

  it('is declared on every operation for organization tokens only, and on none an end user may call', () => {
    const refusesEndUsers = (op: { responses: Record<string, { description?: string }> }) => op.responses['403']?.description?.includes('end_user_forbidden') ?? false;
    const wrong = documented
      .filter((r) => !r.public)
      .filter((r) => {
        const op = operations.get(`${r.method} ${r.path}`)! as { responses: Record<string, { description?: string }> };
        return r.endUsers ? refusesEndUsers(op) : op.responses['403'] === undefined;
      })
      .map((r) => `${r.method} ${r.path}`);
    expect(wrong).toEqual([]);
  });
});
