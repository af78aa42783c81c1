import fs from 'node:fs';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { type DatabaseHandle, projectRoot } from '../../db/client';
import { runs } from '../../db/schema';
import type { Principal } from '../../src/auth/principal';
import { CompositionsService } from '../../src/compositions/compositions.service';
import { compileComposition, constantDestinationProblems } from '../../src/compositions/compile';
import { loadConfig } from '../../src/config';
import { StartChecks } from '../../src/runs/start-checks';
import type { ConnectionStore } from '../../activities/connections';
import { compositionBodySchema, type CompositionStep } from '../../src/compositions/composition-body';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { compositionDefinition, temporalStart } from '../../workflows/composition/definition';
import { COMPOSED_WORKFLOW } from '../../workflows/constants';
import { composedType, compositionInputSchema, parseComposedType, type Plan } from '../../workflows/composition/plan';
import { findDefinition } from '../../workflows/registry';
import { ANY_STATE, defineWorkflow, failureFields } from '../../workflows/runtime/definition';
import { fieldProblems } from '../../workflows/runtime/field-problems';
import { jsonSchema } from '../../src/catalog/json-schema';
import { openMigratedPglite } from '../support/pglite';

const RESOURCES = 'esign.resources.get-resource-information';
const DELETE = 'esign.authorizations.delete-user-authorization';
const ENDPOINTS = 'dbhost.endpoints.list';

const testType = (workflow_type: string, input: z.ZodObject, output: z.ZodObject) => defineWorkflow({
  workflow_type,
  version: '1.0',
  kind: 'Atomic',
  description: workflow_type,
  input,
  output,
  states: { pending: { initial: true, auto_advance: 'execute' }, completed: { terminal: true, success: true }, failed: { terminal: true } },
  transitions: [
    { from: 'pending', action: 'execute', to: 'completed' },
    { from: ANY_STATE, action: 'fail', to: 'failed' },
  ],
  exposed_to_end_users: false,
  prerequisites: [],
  secret_fields: [],
  outbound_url_fields: [],
  failure_stamp: 'failed_at',
  actions: {},
});
/** A type naming what a route step should run, as payments.webhooks.receive does. */
const classifier = testType(
  'test.classify',
  z.strictObject({ payload: z.string() }),
  z.object({ route_workflow_type: z.string().nullable().optional(), customer_id: z.string().optional(), ...failureFields }),
);
const counter = testType('test.count', z.strictObject({ count: z.number() }), z.object({ ...failureFields }));
const lookup = (t: string) => [classifier, counter].find((d) => d.workflow_type === t) ?? findDefinition(t);

const steps = (list: unknown[]) => compositionBodySchema.parse({ name: 'n', steps: list }).steps;
const compile = (list: unknown[]) => compileComposition(steps(list), lookup);
const problemsOf = (list: unknown[]) => {
  const result = compile(list);
  if (!('problems' in result)) throw new Error('expected problems');
  return result.problems.map((p) => ({ field: p.field, rule: p.rule }));
};
const planOf = (list: unknown[]): Plan => {
  const result = compile(list);
  if ('problems' in result) throw new Error(JSON.stringify(result.problems));
  return result.plan;
};

const info = (inputs: Record<string, unknown> = {}) => ({
  id: 'info',
  workflow_type: RESOURCES,
  inputs: { base_url: { from: 'input', name: 'base_url' }, api_token: { from: 'input', name: 'api_token' }, ...inputs },
});
const del = (inputs: Record<string, unknown> = {}) => ({
  id: 'remove',
  workflow_type: DELETE,
  inputs: {
    base_url: { from: 'step', step: 'info', field: 'base_url' },
    api_token: { from: 'input', name: 'api_token' },
    accountid: { const: '4711' },
    userid: { from: 'input', name: 'userid' },
    authorizationid: { from: 'input', name: 'authorizationid' },
    ...inputs,
  },
});

describe('compileComposition', () => {
  it('compiles valid steps into layers in the given order', () => {
    const plan = planOf([info(), del()]);
    expect(plan.layers.map((l) => [l.layer, l.step, l.workflow_type])).toEqual([
      ['01_info', 'info', RESOURCES],
      ['02_remove', 'remove', DELETE],
    ]);
    expect(plan.layers[1].inputs.accountid).toEqual({ const: '4711' });
  });

  it('orders a step after the steps it takes outputs from, even when listed before them', () => {
    const plan = planOf([del(), info()]);
    expect(plan.layers.map((l) => l.step)).toEqual(['info', 'remove']);
  });

  it.each([
    ['an unknown type', [{ id: 'a', workflow_type: 'no.such.type', inputs: {} }], 'steps.0.workflow_type', 'unknown_type'],
    ['a composed type as a step', [{ id: 'a', workflow_type: composedType('0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f', 1), inputs: {} }], 'steps.0.workflow_type', 'unknown_type'],
    ['a mapping onto a field the type lacks', [info({ colour: { const: 'red' } })], 'steps.0.inputs.colour', 'unknown_field'],
    ['a mapping from an output the step lacks', [info(), del({ userid: { from: 'step', step: 'info', field: 'nope' } })], 'steps.1.inputs.userid', 'unknown_field'],
    ['a mapping from an unknown step', [info(), del({ userid: { from: 'step', step: 'ghost', field: 'x' } })], 'steps.1.inputs.userid', 'unknown_step'],
    ['an array output into a string input', [{ id: 'eps', workflow_type: ENDPOINTS, inputs: { connection_uuid: { from: 'input', name: 'c' }, dbhost_project_id: { from: 'input', name: 'p' } } }, info(), del({ userid: { from: 'step', step: 'eps', field: 'endpoints' } })], 'steps.2.inputs.userid', 'type_mismatch'],
    ['a constant of the wrong type', [info(), del({ accountid: { const: 4711 } })], 'steps.1.inputs.accountid', 'type_mismatch'],
    ['a constant failing the field rule', [info(), del({ accountid: { const: 'not-an-account' } })], 'steps.1.inputs.accountid', 'type_mismatch'],
    ['a secret as a constant', [info({ api_token: { const: 'tok' } })], 'steps.0.inputs.api_token', 'secret_const'],
    ['a secret output into a secret field', [info(), del({ api_token: { from: 'step', step: 'info', field: 'api_token' } })], 'steps.1.inputs.api_token', 'secret_output'],
    ['a secret output into a field that is not secret', [info(), del({ userid: { from: 'step', step: 'info', field: 'api_token' } })], 'steps.1.inputs.userid', 'secret_output'],
    ['a required field left unmapped', [info(), del({ userid: undefined })], 'steps.1.inputs.userid', 'required'],
    ['a step given neither of the fields its type needs one of', [{ id: 'info', workflow_type: RESOURCES, inputs: { api_token: { from: 'input', name: 'api_token' } } }], 'steps.0.inputs.base_url', 'required'],
    ['two steps with one id', [info(), { ...info(), workflow_type: RESOURCES }], 'steps.1.id', 'unique'],
    ['a route step with nothing before it', [{ id: 'r', workflow_type: 'route', inputs: {} }], 'steps.0.workflow_type', 'no_route_source'],
    ['a step id every composed run uses as an output', [{ ...info(), id: 'summary' }], 'steps.0.id', 'reserved'],
    ['a free input named like an output of every composed run', [info({ api_token: { from: 'input', name: 'status' } })], 'steps.0.inputs.api_token', 'reserved'],
    ['a free input named like a failure field of every composed run', [info({ api_token: { from: 'input', name: 'failure_reason' } })], 'steps.0.inputs.api_token', 'reserved'],
    ['a step id that is also a free input, of the step itself', [info({ base_url: { from: 'input', name: 'info' } })], 'steps.0.id', 'name_clash'],
    ['a step id that is also a free input, of a later step', [{ ...info(), id: 'u' }, { ...info({ base_url: { from: 'input', name: 'u' } }), id: 'v' }], 'steps.0.id', 'name_clash'],
    ['a route step after steps that name no route', [info(), { id: 'r', workflow_type: 'route', inputs: {} }], 'steps.1.workflow_type', 'no_route_source'],
  ])('refuses %s, naming the step and field', (_what, list, field, rule) => {
    const cleaned = JSON.parse(JSON.stringify(list));
    expect(problemsOf(cleaned)).toContainEqual({ field, rule });
  });

  it.each([
    ['onto', [info({ constructor: { const: 1 } })], ['steps', 0, 'inputs', 'constructor']],
    ['from', [info(), del({ userid: { from: 'step', step: 'info', field: 'toString' } })], ['steps', 1, 'inputs', 'userid', 'field']],
  ])('refuses in the body schema, before compiling, a mapping %s a name every object inherits', (_what, list, path) => {
    const parsed = compositionBodySchema.safeParse({ name: 'n', steps: JSON.parse(JSON.stringify(list)) });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path)).toEqual([path]);
  });

  it('refuses, only when exposed to end users, a step whose type takes the end user from the token', () => {
    const revoke = [{ id: 'revoke', workflow_type: 'identity.end-user.session.revoke', inputs: { end_user_uuid: { from: 'input', name: 'who' } } }];
    const exposed = compileComposition(steps(revoke), lookup, true);
    expect('problems' in exposed && exposed.problems).toEqual([
      expect.objectContaining({ field: 'steps.0.workflow_type', rule: 'end_user_identity', message: expect.stringContaining('end_user_uuid') }),
    ]);
    expect(compileComposition(steps(revoke), lookup, false)).toHaveProperty('plan');
    expect(compileComposition(steps([info(), del()]), lookup, true)).toHaveProperty('plan');
  });

  it('names the step in every message', () => {
    const result = compile([info(), del({ accountid: { const: 4711 } })]);
    expect('problems' in result && result.problems[0].message).toMatch(/^step remove: /);
  });

  it('refuses a cycle at the mapping that closes it', () => {
    const a = { id: 'a', workflow_type: RESOURCES, inputs: { base_url: { from: 'step', step: 'b', field: 'base_url' } } };
    const b = { id: 'b', workflow_type: RESOURCES, inputs: { base_url: { from: 'step', step: 'a', field: 'base_url' } } };
    const problems = compile([a, b]);
    expect('problems' in problems && problems.problems).toEqual([
      expect.objectContaining({ rule: 'cycle', message: expect.stringMatching(/cycle \((a → b → a|b → a → b)\)/) }),
    ]);
    expect(problemsOf([{ ...a, inputs: { base_url: { from: 'step', step: 'a', field: 'base_url' } } }])).toEqual([{ field: 'steps.0.inputs.base_url', rule: 'cycle' }]);
  });

  it('refuses one input feeding fields of different types', () => {
    const a = { id: 'a', workflow_type: classifier.workflow_type, inputs: { payload: { from: 'input', name: 'x' } } };
    const b = { id: 'b', workflow_type: counter.workflow_type, inputs: { count: { from: 'input', name: 'x' } } };
    expect(problemsOf([a, b])).toEqual([{ field: 'steps.1.inputs.count', rule: 'type_mismatch' }]);
    expect(planOf([a, { ...b, inputs: { count: { from: 'input', name: 'y' } } }]).layers).toHaveLength(2);
  });

  it('refuses a free input feeding a secret field and any field that is not secret, naming each of those', () => {
    const tok = { from: 'input', name: 'tok' };
    const sameStep = problemsOf([info(), del({ api_token: tok, userid: tok })]);
    expect(sameStep).toEqual([{ field: 'steps.1.inputs.userid', rule: 'secret_input' }]);
    // Whichever step comes first, and a route step's field, whose secrecy is known only at run time.
    const classify = { id: 'classify', workflow_type: classifier.workflow_type, inputs: { payload: tok } };
    const routed = { id: 'then', workflow_type: 'route', inputs: { subject: tok } };
    expect(problemsOf([classify, info({ api_token: tok }), routed])).toEqual([
      { field: 'steps.0.inputs.payload', rule: 'secret_input' },
      { field: 'steps.2.inputs.subject', rule: 'secret_input' },
    ]);
    // Secret fields only, in any number of steps: accepted, and secret in the composed run.
    expect(planOf([info({ api_token: tok }), del({ api_token: tok })]).layers).toHaveLength(2);
  });

  it('routes from the nearest earlier step declaring route_workflow_type, and accepts any mapping from it', () => {
    const classify = { id: 'classify', workflow_type: classifier.workflow_type, inputs: { payload: { from: 'input', name: 'payload' } } };
    const plan = planOf([classify, { id: 'then', workflow_type: 'route', inputs: { subject: { from: 'step', step: 'classify', field: 'customer_id' } } }]);
    expect(plan.layers.map((l) => [l.step, l.workflow_type])).toEqual([
      ['classify', classifier.workflow_type],
      ['then', 'route'],
    ]);
  });
});

describe('constants, checked as a start of their type checks its input', () => {
  const start = { organization_uuid: 'org_composing', checks: new StartChecks(loadConfig({}), { get: async () => undefined }) };
  const problemsWithStart = (list: unknown[]) => {
    const result = compileComposition(steps(list), lookup, false, start);
    return 'problems' in result ? result.problems.map((p) => ({ field: p.field, rule: p.rule })) : [];
  };
  const webhook = (inputs: Record<string, unknown>) => ({
    id: 'hook',
    workflow_type: 'webhook.endpoint.create-verify-and-replay',
    inputs: { organization_uuid: { const: 'org_composing' }, target_url: { const: 'https://hooks.example.com/in' }, endpoint_name: { const: 'composed' }, ...inputs },
  });
  const deep = (levels: number): unknown => (levels ? { next: deep(levels - 1) } : {});

  it.each([
    ['a URL over plain http', [info({ base_url: { const: 'http://10.1.2.3/api' } })], 'steps.0.inputs.base_url', 'outbound_policy'],
    ['a URL at a private address', [info({ base_url: { const: 'https://10.1.2.3/api' } })], 'steps.0.inputs.base_url', 'outbound_policy'],
    ['another organization', [webhook({ organization_uuid: { const: 'org_someone_else' } })], 'steps.0.inputs.organization_uuid', 'organization_mismatch'],
    ['an input nested deeper than a start may be', [webhook({ test_event: { const: deep(20) } })], 'steps.0.inputs', 'max_depth'],
  ])('refuses %s, as a start of the type would', (_what, list, field, rule) => {
    expect(problemsWithStart(list)).toEqual([{ field, rule }]);
  });

  it('accepts what a start of the type accepts', () => {
    expect(problemsWithStart([info({ base_url: { const: 'https://esign.example.com/api' } }), del()])).toEqual([]);
    expect(problemsWithStart([webhook({ test_event: { const: deep(3) } })])).toEqual([]);
  });

  it("applies the type's rules across fields when every input is a constant, and only then", () => {
    const configure = (inputs: Record<string, unknown>) => [{ id: 'apps', workflow_type: 'identity.app.configure-client', inputs }];
    const clientKey = { const: 'ck_0123456789abcdef' };
    expect(problemsOf(configure({ client_key: clientKey, add_redirect_uris: { const: [] } }))).toEqual([
      { field: 'steps.0.inputs.add_redirect_uris', rule: 'type_mismatch' },
    ]);
    // remove_redirect_uris, given at start, may meet the rule.
    expect(planOf(configure({ client_key: clientKey, add_redirect_uris: { const: [] }, remove_redirect_uris: { from: 'input', name: 'remove' } })).layers).toHaveLength(1);
  });

  it("refuses a constant connection's constant URL outside its stored destination, as a start naming both is", async () => {
    const pinned = (base_url: string) =>
      steps([{ id: 'info', workflow_type: RESOURCES, inputs: { connection_uuid: { const: '0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f' }, base_url: { const: base_url } } }]);
    const asked: unknown[][] = [];
    const checks = {
      connectionDestinationProblem: async (...args: [string, string, string, string]) => {
        asked.push(args);
        return args[3].startsWith('https://esign.example.com/') ? undefined : 'must have the origin of connection …';
      },
    };
    expect(await constantDestinationProblems(pinned('https://elsewhere.example.com/api'), lookup, 'org_composing', checks)).toEqual([
      { field: 'steps.0.inputs.base_url', rule: 'connection_destination', message: 'step info: must have the origin of connection …' },
    ]);
    expect(await constantDestinationProblems(pinned('https://esign.example.com/api'), lookup, 'org_composing', checks)).toEqual([]);
    expect(asked[0]).toEqual(['org_composing', 'esign', '0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f', 'https://elsewhere.example.com/api']);
    // A URL given at start is checked at start; one from another step, by the activity before any call.
    expect(await constantDestinationProblems(steps([info({ connection_uuid: { const: '0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f' } })]), lookup, 'org_composing', checks)).toEqual([]);
    expect(asked).toHaveLength(2);
  });
});

describe('composed type definition', () => {
  const version = (plan: Plan) => ({ composition_uuid: '0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f', version: 2, name: 'cleanup', exposed_to_end_users: true, plan });
  const def = compositionDefinition(version(planOf([info(), del()])), lookup);

  it('is named virtual.<uuid>@N, kind Dag, one running state per step', () => {
    expect(def.workflow_type).toBe('virtual.0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f@2');
    expect(parseComposedType(def.workflow_type)).toEqual({ composition_uuid: '0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f', version: 2 });
    expect(parseComposedType('virtual.nope@1')).toBeUndefined();
    expect(def.kind).toBe('Dag');
    // <major>.<minor>, as a built-in type's version is.
    expect([def.version, findDefinition(RESOURCES)!.version]).toEqual(['2.0', '1.0']);
    expect(def.exposed_to_end_users).toBe(true);
    expect(Object.keys(def.states)).toEqual(expect.arrayContaining(['pending', 'running_info', 'running_remove', 'completed', 'failed']));
  });

  it('takes its free inputs only; a bound field is refused as such', () => {
    const ok = def.input.safeParse({ base_url: 'https://esign.example.com/api', api_token: 't', userid: 'u', authorizationid: 'a' });
    expect(ok.success).toBe(true);
    const bound = def.input.safeParse({ base_url: 'https://esign.example.com/api', userid: 'u', authorizationid: 'a', accountid: '1' });
    expect(bound.success).toBe(false);
    expect(bound.error!.issues).toEqual([expect.objectContaining({ path: ['accountid'], params: { rule: 'bound_input' } })]);
    const unknown = def.input.safeParse({ base_url: 'https://esign.example.com/api', userid: 'u', authorizationid: 'a', colour: 1 });
    expect(unknown.error!.issues[0].code).toBe('unrecognized_keys');
    expect(def.input.safeParse({ api_token: 't' }).success).toBe(false);
  });

  it("requires at start what its steps' types require beyond single fields (base_url, or connection_uuid), and says so in its JSON Schema", () => {
    const given = { api_token: 't', userid: 'u', authorizationid: 'a' };
    const problems = (d: typeof def, data: Record<string, unknown>) => {
      const parsed = d.input.safeParse(data);
      return parsed.success ? [] : fieldProblems(parsed.error, data, 'initial_data');
    };
    // Step info takes base_url from an input, and no connection_uuid: base_url is required.
    expect(problems(def, given)).toEqual([{ field: 'initial_data.base_url', rule: 'required', message: 'is required: step info needs base_url or connection_uuid' }]);
    expect(jsonSchema(compositionInputSchema(def.composition.plan, lookup).freeOnly, 'input')).toMatchObject({ required: ['base_url', 'userid', 'authorizationid'] });
    // Both from inputs: either one.
    const either = compositionDefinition(version(planOf([info({ connection_uuid: { from: 'input', name: 'conn' } }), del()])), lookup);
    expect(problems(either, given)).toEqual([{ field: 'initial_data.base_url', rule: 'required', message: 'is required without conn: step info needs base_url or connection_uuid' }]);
    expect(problems(either, { ...given, conn: '0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f' })).toEqual([]);
    const schema = jsonSchema(compositionInputSchema(either.composition.plan, lookup).freeOnly, 'input');
    expect(schema).toMatchObject({ required: ['userid', 'authorizationid'], anyOf: [{ required: ['base_url'] }, { required: ['conn'] }] });
    // Met by the composition itself (a constant connection_uuid): nothing more to give.
    const bound = compositionDefinition(version(planOf([{ id: 'info', workflow_type: RESOURCES, inputs: { connection_uuid: { const: '0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f' } } }])), lookup);
    expect(problems(bound, {})).toEqual([]);
    // As runs recorded before validated their input.
    expect(problems(compositionDefinition(def.composition, lookup, false), given)).toEqual([]);
  });

  it('keeps a secret input secret and checks a URL input against the outbound policy', () => {
    expect(def.secret_fields).toEqual(['api_token']);
    expect(def.outbound_url_fields).toEqual(['base_url']);
  });

  it("needs what its steps' types need", () => {
    expect(def.prerequisites).toEqual([]);
    const eps = { id: 'eps', workflow_type: ENDPOINTS, inputs: { connection_uuid: { from: 'input', name: 'c' }, dbhost_project_id: { from: 'input', name: 'p' } } };
    const withDbhost = compositionDefinition(version(planOf([eps, { ...eps, id: 'again' }])), lookup);
    expect(withDbhost.prerequisites.map((p) => p.plugin)).toEqual(['dbhost']);
  });

  it('starts under the one composed Temporal type with its version; a built-in type under its own name', () => {
    const input = { organization_uuid: 'org_x', initial_data: { userid: 'u' } };
    expect(temporalStart(def, input)).toEqual({ workflowType: COMPOSED_WORKFLOW, args: [{ ...input, composition: def.composition }] });
    expect(def.composition.plan.layers.map((l) => l.step)).toEqual(['info', 'remove']);
    expect(temporalStart(findDefinition(RESOURCES)!, input)).toEqual({ workflowType: RESOURCES, args: [input] });
  });
});

describe('composition body', () => {
  it.each([
    [{ name: 'n', steps: [] }, 'steps'],
    [{ name: ' ', steps: [info()] }, 'name'],
    [{ name: 'n', steps: [{ ...info(), id: 'has space' }] }, 'steps.0.id'],
    [{ name: 'n', steps: [info({ base_url: { from: 'elsewhere' } })] }, 'steps.0.inputs.base_url'],
  ])('refuses %j at %s', (body, field) => {
    const parsed = compositionBodySchema.safeParse(body);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => i.path.join('.'))).toContain(field);
  });

  it('keeps the steps as given', () => {
    const step: CompositionStep = steps([info()])[0];
    expect(step.inputs.base_url).toEqual({ from: 'input', name: 'base_url' });
  });
});

describe('OpenAPI document', () => {
  const doc = buildOpenApiDocument() as any;

  it('documents the composition routes and starts of composed types', () => {
    expect(Object.keys(doc.paths['/api/compositions'])).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/compositions/{uuid}'])).toEqual(['get', 'put']);
    expect(Object.keys(doc.paths['/api/compositions'].post.responses)).toEqual(expect.arrayContaining(['201', '422']));
    expect(Object.keys(doc.paths['/api/compositions/{uuid}'].put.responses)).toEqual(expect.arrayContaining(['200', '404', '422']));
    const bodies = doc.paths['/api/workflows/start'].post.requestBody.content['application/json'].schema.oneOf;
    const composed = bodies.find((b: { title: string }) => b.title.startsWith('virtual.'));
    expect(new RegExp(composed.properties.workflow_type.pattern).test(composedType('0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f', 12))).toBe(true);
  });
});

describe('composed types listed by a process that did not create them', () => {
  let database: DatabaseHandle;
  const member = (organization_uuid: string): Principal => ({
    user_id: 'tok_unit',
    organization_uuid,
    username: 'unit',
    token_type: 'org_member',
    principal_type: 'api_token',
  });
  const body = (name: string) => compositionBodySchema.parse({ name, steps: [info()] });
  const noConnections = { get: async () => undefined } as unknown as ConnectionStore;

  beforeAll(async () => {
    database = await openMigratedPglite();
  });
  afterAll(() => database.close());

  it('lists every version, newest composition first, as the creating process does, from the plans it reads once', async () => {
    const creator = new CompositionsService(database, loadConfig({}), noConnections);
    const first = await creator.create(member('org_list_a'), body('first'));
    const second = await creator.create(member('org_list_a'), body('second'));
    await creator.update(member('org_list_a'), second.composition_uuid, body('second, again'));
    await creator.create(member('org_list_b'), body('elsewhere'));

    const fresh = new CompositionsService(database, loadConfig({}), noConnections);
    const listed = await fresh.listTypes('org_list_a');
    expect(listed.map((d) => d.workflow_type)).toEqual([
      composedType(second.composition_uuid, 2),
      composedType(second.composition_uuid, 1),
      composedType(first.composition_uuid, 1),
    ]);
    expect(listed.map((d) => d.workflow_type)).toEqual((await creator.listTypes('org_list_a')).map((d) => d.workflow_type));
    expect(listed.map((d) => d.description)).toEqual(expect.arrayContaining([expect.stringContaining('second, again')]));
    // Listed again: the same compiled definitions, not new ones from plans read anew.
    const again = await fresh.listTypes('org_list_a');
    again.forEach((d, i) => expect(d).toBe(listed[i]));
    expect(await fresh.listTypes('org_unknown')).toEqual([]);
  });

  it('migration 0011 rewrites the version of composed runs registered as N to N.0, and nothing else', async () => {
    const composed = composedType('0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f', 12);
    const at = new Date();
    const run = (workflowId: string, workflowType: string, version: string) =>
      ({ workflowId, organizationUuid: 'org_migrated', workflowType, version, stateName: 'completed', status: 'COMPLETED', createdAt: at, updatedAt: at });
    await database.db.insert(runs).values([
      run('wf_migrated_old', composed, '12'),
      run('wf_migrated_new', composed, '12.0'),
      run('wf_migrated_builtin', RESOURCES, '1.0'),
      run('wf_migrated_other', 'acme.legacy', '3'),
    ]);
    await database.db.execute(sql.raw(fs.readFileSync(path.join(projectRoot(), 'db', 'migrations', '0011_composed_run_versions.sql'), 'utf8')));
    const rows = await database.db.select({ id: runs.workflowId, version: runs.version }).from(runs).where(eq(runs.organizationUuid, 'org_migrated'));
    expect(Object.fromEntries(rows.map((r) => [r.id, r.version]))).toEqual({
      wf_migrated_old: '12.0',
      wf_migrated_new: '12.0',
      wf_migrated_builtin: '1.0',
      wf_migrated_other: '3',
    });
  });
});
