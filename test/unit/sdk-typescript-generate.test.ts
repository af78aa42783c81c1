import path from 'node:path';
import ts from 'typescript';
import { generateBindings, type WorkflowEngine } from '@workflow-engine/sdk';
import { interfaceNames } from '../../sdk/typescript/src/generate/names';

const SDK = path.join(__dirname, '..', '..', 'sdk', 'typescript');

// Every shape a catalog name takes: dots and dashes, snake_case, a composition's virtual.<uuid>@N
// (digits followed by letters), a segment and a whole type starting with a digit.
const TYPES = [
  'esign.resources.get-resource-information',
  'virtual.daaa9a67-a790-4301-b761-5ab20dd21002@1',
  'virtual.0b1c2d3e-4f50-6a7b-8c9d-0e1f2a3b4c5d@12',
  'acme.2fa.send_code',
  '3d.render',
  // Both fold to AcmeSendCode: the second is AcmeSendCode2.
  'acme.send-code',
  'acme-send.code',
];

const objectSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'ignored',
  type: 'object',
  properties: { a: { type: 'string' } },
  required: ['a'],
};
// oneOf compiles to a type alias rather than an interface.
const aliasSchema = { oneOf: [objectSchema, { type: 'object', properties: { b: { type: 'integer' } }, required: ['b'] }] };

const catalog = {
  catalog: {
    listTypes: async () => ({ types: TYPES.map((workflow_type) => ({ workflow_type })) }),
    getSchema: async (workflowType: string) => ({
      input_schema: workflowType.startsWith('virtual.') ? aliasSchema : objectSchema,
      output_schema: objectSchema,
    }),
  },
} as unknown as WorkflowEngine;

/** The compiler's diagnostics for `source` as if it sat next to the committed bindings. */
function typeCheck(source: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(SDK, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  )!;
  const file = path.join(SDK, 'src', 'generated', 'unit-check.ts');
  const host = ts.createCompilerHost(config.options);
  const { getSourceFile, fileExists } = host;
  host.fileExists = (name) => name === file || fileExists(name);
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest);
  const program = ts.createProgram([file], { ...config.options, noEmit: true }, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('generated bindings', () => {
  it('compile for every catalog name shape: each type the bindings name is declared', async () => {
    const source = await generateBindings(catalog, { sdkImport: '../index.js' });
    const names = interfaceNames([...TYPES].sort());
    for (const workflowType of TYPES) {
      const name = names.get(workflowType)!;
      expect(source.match(new RegExp(`export (interface|type) ${name}Input\\b`, 'g'))).toHaveLength(1);
      expect(source).toContain(`start<${name}Input, ${name}Output>(${JSON.stringify(workflowType)})`);
    }
    expect(typeCheck(source)).toEqual([]);
  }, 60_000);

  it('types whose names fold to one interface name get distinct ones, stable in catalog order', () => {
    const names = interfaceNames(['acme-send.code', 'acme.send-code', 'acme.send_code']);
    expect([...names.values()]).toEqual(['AcmeSendCode', 'AcmeSendCode2', 'AcmeSendCode3']);
  });
});
