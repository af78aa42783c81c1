import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../db/client';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { workflowTypes } from '../../workflows/registry';
import { type FuzzTarget, startFuzzTarget } from './fuzz-stack';

/**
 * Schemathesis (PyPI, pinned in scripts/bootstrap.sh) against the whole HTTP API, driven by
 * the OpenAPI document the API serves, as two organizations' org-member tokens. Every check
 * runs (no 5xx, documented status codes, content types, headers and response schemas,
 * schema-valid input accepted, schema-invalid input rejected, auth enforced, one
 * organization's objects unreadable by the other, stateful sequences along the document's
 * links) except where test/fuzz/schemathesis.toml says why not. One jest test per documented
 * operation, failing with schemathesis' report (reproducing curl included) for that operation.
 *
 * Bounded in `make test`; `make fuzz` (scripts/fuzz.sh) raises the examples and picks a random seed.
 *   FUZZ_MAX_EXAMPLES  test cases per operation and phase (default 25)
 *   FUZZ_SEED          a number, or "random" (default: a fixed seed, so `make test` is repeatable)
 *   FUZZ_WORKERS       concurrent schemathesis workers (default 1: on Python 3.11, threads parsing
 *                      lambdas' source at once trip CPython's "AST constructor recursion depth
 *                      mismatch" SystemError inside Hypothesis, python/cpython#106905)
 *   FUZZ_MAX_TIME      seconds: keep fuzzing until spent (default: unset, stop after the examples)
 * Reports, the full log and the service log stay in .test-data/fuzz/.
 */
const root = projectRoot();
const reportDir = path.join(root, '.test-data', 'fuzz');
const schemathesis = path.join(root, '.venv', 'bin', 'schemathesis');
const maxExamples = Number(process.env.FUZZ_MAX_EXAMPLES || 25);
const workers = Number(process.env.FUZZ_WORKERS || 1);
const maxTime = process.env.FUZZ_MAX_TIME ? Number(process.env.FUZZ_MAX_TIME) : undefined;
const seed = process.env.FUZZ_SEED || '20261122';
/** Generous: a bounded run takes about a minute; FUZZ_MAX_TIME adds its own budget. */
const hookTimeoutMs = (maxTime ?? 0) * 1000 + Math.max(10, maxExamples / 5) * 60_000;

/** The operations the document declares, as schemathesis labels them ("GET /api/workflows"). */
const operations = Object.entries(buildOpenApiDocument().paths).flatMap(([p, item]) =>
  Object.keys(item as object).map((method) => `${method.toUpperCase()} ${p}`),
);

interface Outcome {
  exitCode: number | null;
  log: string;
  /** junit testcases by operation label: the failure texts schemathesis reported for each. */
  cases: Map<string, string[]>;
}

const unescapeXml = (s: string) =>
  s
    .replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

function parseJunit(xml: string): Map<string, string[]> {
  const cases = new Map<string, string[]>();
  for (const m of xml.matchAll(/<testcase\b[^>]*\bname="([^"]*)"[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const failures = [...(m[2] ?? '').matchAll(/<(failure|error)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1>)/g)].map((f) =>
      unescapeXml(`${f[1]}${/message="([^"]*)"/.exec(f[2])?.[1] ? ` ${/message="([^"]*)"/.exec(f[2])![1]}` : ''}:\n${f[3] ?? ''}`),
    );
    const label = unescapeXml(m[1]);
    cases.set(label, [...(cases.get(label) ?? []), ...failures]);
  }
  return cases;
}

/** The configuration the run uses: test/fuzz/schemathesis.toml plus this run's identities and known ids. */
function writeConfig(target: FuzzTarget): string {
  const auth = path.join(reportDir, 'auth.wfc.json');
  fs.writeFileSync(
    auth,
    JSON.stringify({
      auth: target.identities.map(({ name, token }) => ({ name, fixedHeaders: [{ name: 'Authorization', value: `Bearer ${token}` }] })),
    }),
    { mode: 0o600 },
  );
  const dictionary = (name: string, values: string[]) => {
    const file = path.join(reportDir, `${name}.dict`);
    fs.writeFileSync(file, values.map((v) => JSON.stringify(v)).join('\n') + '\n');
    return `[dictionaries.${name}]\nfrom-file = ${JSON.stringify(file)}\n`;
  };
  const generated = [
    '\n# Generated for this run by test/fuzz/api.fuzz.test.ts.',
    `[auth.wfc]\npath = ${JSON.stringify(auth)}\npeers = ${JSON.stringify(target.identities.map((i) => i.name))}\n`,
    dictionary('runs', target.known.runs),
    dictionary('connections', target.known.connections),
    dictionary('types', [...workflowTypes]),
    // Half of the generated ids are real ones: the 200 (and retry's 409) paths get fuzzed too.
    '[parameters]',
    '"path.id" = { dictionary = "runs", probability = 0.5 }',
    '"path.uuid" = { dictionary = "connections", probability = 0.5 }',
    '"path.type" = { dictionary = "types", probability = 0.5 }',
  ].join('\n');
  const file = path.join(reportDir, 'schemathesis.toml');
  fs.writeFileSync(file, fs.readFileSync(path.join(__dirname, 'schemathesis.toml'), 'utf8') + generated + '\n');
  return file;
}

function runSchemathesis(target: FuzzTarget): Promise<Outcome> {
  const junit = path.join(reportDir, 'junit.xml');
  fs.rmSync(junit, { force: true });
  const args = ['--config-file', writeConfig(target), '--no-color', 'run', `${target.apiUrl}/api/openapi.json`];
  args.push('--max-examples', String(maxExamples), '--workers', String(workers));
  if (seed !== 'random') args.push('--seed', seed);
  if (maxTime) args.push('--max-time', String(maxTime));
  args.push('--report', 'junit,ndjson', '--report-dir', reportDir, '--report-junit-path', junit, '--report-ndjson-path', path.join(reportDir, 'events.ndjson'));
  const logPath = path.join(reportDir, 'schemathesis.log');
  return new Promise((resolve, reject) => {
    // cwd: schemathesis keeps its example database (.hypothesis, .schemathesis) there.
    const child = spawn(schemathesis, args, { cwd: reportDir, env: { ...process.env, NO_COLOR: '1', COLUMNS: '120' } });
    let log = '';
    child.stdout.on('data', (c: Buffer) => (log += c.toString()));
    child.stderr.on('data', (c: Buffer) => (log += c.toString()));
    child.on('error', reject);
    child.on('close', (exitCode) => {
      fs.writeFileSync(logPath, log);
      const cases = fs.existsSync(junit) ? parseJunit(fs.readFileSync(junit, 'utf8')) : new Map<string, string[]>();
      resolve({ exitCode, log, cases });
    });
  });
}

/** The end of schemathesis' report: phases, failures by code, warnings, seed. */
const summaryOf = (log: string) => {
  const at = log.lastIndexOf('SUMMARY');
  return (at >= 0 ? log.slice(log.lastIndexOf('\n', at) + 1) : log.slice(-4000)).trim();
};

describe('HTTP API fuzzing (schemathesis, from the OpenAPI document)', () => {
  let target: FuzzTarget | undefined;
  let outcome: Outcome;

  beforeAll(async () => {
    if (!fs.existsSync(schemathesis)) throw new Error(`${schemathesis} missing: run scripts/bootstrap.sh`);
    fs.mkdirSync(reportDir, { recursive: true });
    const t0 = Date.now();
    target = await startFuzzTarget(path.join(reportDir, 'service.log'));
    const t1 = Date.now();
    outcome = await runSchemathesis(target);
    const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
    process.stdout.write(
      `\n[fuzz] stack ${seconds(t1 - t0)}, schemathesis ${seconds(Date.now() - t1)} (max-examples ${maxExamples}, workers ${workers}, seed ${seed}${maxTime ? `, max-time ${maxTime} s` : ''}); exit ${outcome.exitCode}; logs in ${path.relative(root, reportDir)}/\n` +
        summaryOf(outcome.log).replace(/^/gm, '[fuzz] ') +
        '\n',
    );
  }, hookTimeoutMs);

  afterAll(async () => {
    await target?.stop();
  }, 60_000);

  it.each(operations)('%s: every check passes', (label) => {
    const failures = outcome.cases.get(label);
    if (failures === undefined) throw new Error(`schemathesis did not test ${label}; see ${reportDir}/schemathesis.log`);
    if (failures.length) throw new Error(`${failures.length} failure(s) for ${label}:\n\n${failures.join('\n\n')}`);
  });

  it('stateful sequences pass and schemathesis exits 0', () => {
    // Failures of multi-step scenarios (use_after_free, ensure_resource_availability, ...) are
    // reported under "Stateful tests" rather than under one operation.
    const elsewhere = [...outcome.cases].filter(([label, failures]) => !operations.includes(label) && failures.length);
    if (elsewhere.length) throw new Error(elsewhere.map(([label, failures]) => `${label}:\n\n${failures.join('\n\n')}`).join('\n\n'));
    if (outcome.exitCode !== 0) throw new Error(`schemathesis exited ${outcome.exitCode}:\n${summaryOf(outcome.log)}`);
  });
});
