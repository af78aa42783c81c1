import { CatalogService } from '../../src/catalog/catalog.service';
import { buildOpenApiDocument } from '../../src/openapi/document';

describe('catalog', () => {
  const catalog = new CatalogService(undefined as never, undefined as never);

  it('lists types with a namespace summary, filtered by prefix', () => {
    const all = catalog.listTypes();
    expect(all.types.map((t) => t.workflow_type)).toEqual(
      expect.arrayContaining(['esign.authorizations.delete-user-authorization', 'esign.resources.get-resource-information']),
    );
    expect(all.namespaces).toContainEqual({ name: 'esign', count: 2 });
    const none = catalog.listTypes('nothing.');
    expect(none).toEqual({ types: [], namespaces: [] });
    expect(catalog.listTypes('esign.resources').types.map((t) => t.workflow_type)).toEqual(['esign.resources.get-resource-information']);
  });

  it('derives JSON Schema 2020-12 from the zod definition', () => {
    const { input_schema, output_schema, has_prerequisites } = catalog.getSchema('esign.authorizations.delete-user-authorization') as {
      input_schema: Record<string, any>;
      output_schema: Record<string, any>;
      has_prerequisites: boolean;
    };
    expect(input_schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(input_schema.required.sort()).toEqual(['accountid', 'authorizationid', 'userid']);
    // base_url, unless a connection (holding its own base_url) is named.
    expect(input_schema.anyOf).toEqual([{ required: ['base_url'] }, { required: ['connection_uuid'] }]);
    expect(input_schema.additionalProperties).toBe(false);
    expect(Object.keys(input_schema.properties).sort()).toEqual(['accountid', 'api_token', 'authorizationid', 'base_url', 'connection_uuid', 'userid']);
    expect(output_schema.properties).toHaveProperty('failure_reason');
    expect(output_schema.properties).toHaveProperty('failed_at');
    expect(output_schema.properties).toHaveProperty('status_code');
    expect(has_prerequisites).toBe(false);
  });

  it('shows state names in upper case, as runs report them', () => {
    const def = catalog.getDefinition('esign.resources.get-resource-information');
    expect(def.states).toContainEqual({ name: 'PENDING', initial: true, terminal: false, success: false, auto_advance: 'execute' });
    expect(def.transitions).toEqual([
      { from: 'PENDING', action: 'execute', to: 'COMPLETED' },
      { from: '*', action: 'fail', to: 'FAILED' },
    ]);
  });

  it('answers 404 for an unknown type', () => {
    expect(() => catalog.getSchema('nope')).toThrow(expect.objectContaining({ status: 404 }));
  });

  it('documents every run API path in the OpenAPI document', () => {
    const doc = buildOpenApiDocument();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/workflows/types',
        '/api/workflows/types/{type}',
        '/api/workflows/types/{type}/schema',
        '/api/workflows/types/{type}/prerequisites',
        '/api/workflows/start',
        '/api/workflows',
        '/api/workflows/{id}',
        '/api/workflows/{id}/history',
        '/api/workflows/{id}/stream',
        '/api/workflows/{id}/retry',
        '/api/auth/me',
        '/api/health',
      ]),
    );
    const bodies = doc.paths['/api/workflows/start'].post.requestBody.content['application/json'].schema.oneOf;
    expect(bodies.map((b: { title: string }) => b.title)).toContain('esign.authorizations.delete-user-authorization');
  });
});
