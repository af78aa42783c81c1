import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { PAYLOAD_CONVERTER_PATH } from '../../activities/payload-codec';
import { workflowBundlerOptions, workflowInterceptorModules } from './worker';

/**
 * Bundles the workflow code once at build time (dist/workflow-bundle.js), so
 * workers started with WORKFLOW_BUNDLE_PATH skip webpack at start-up.
 */
async function main() {
  const out = path.resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    workflowInterceptorModules,
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    ...workflowBundlerOptions,
  });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, code);
  console.error(`workflow bundle: ${out} (${(code.length / 1024 / 1024).toFixed(1)} MiB)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
