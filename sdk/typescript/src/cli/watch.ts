import { WorkflowFailedError } from '../errors.js';
import type { RunHandle } from '../handle.js';
import { transitionLine } from './render.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface WatchOutput {
  json: boolean;
  out: NodeJS.WriteStream;
}

/**
 * Follows a run to its end: on a TTY a spinner line with the current state and elapsed time
 * under the transitions so far, otherwise one plain line per transition (or one JSON object
 * per event with --json). Answers the completed state_data; throws WorkflowFailedError.
 */
export async function watchRun(handle: RunHandle, { json, out }: WatchOutput): Promise<Record<string, unknown>> {
  const tty = Boolean(out.isTTY) && !json;
  const started = Date.now();
  let state = '…';
  let frame = 0;
  const status = () => `${FRAMES[frame++ % FRAMES.length]} ${handle.workflowId}  ${state}  ${((Date.now() - started) / 1000).toFixed(1)}s`;
  const clear = () => tty && out.write('\r\x1b[2K');
  const timer = tty ? setInterval(() => out.write(`\r\x1b[2K${status()}`), 100) : undefined;
  try {
    for await (const event of handle.events()) {
      if (json) {
        out.write(`${JSON.stringify(event)}\n`);
      } else if (event.type === 'transition') {
        clear();
        out.write(`${tty ? '✓ ' : ''}${transitionLine(event)}\n`);
        state = event.to;
      }
      if (event.type === 'completed') {
        clear();
        if (!json) out.write(`completed (${event.stateName})\n${JSON.stringify(event.stateData, null, 2)}\n`);
        return event.stateData;
      }
      if (event.type === 'failed') {
        clear();
        throw new WorkflowFailedError(handle.workflowId, event.error, event.stateData);
      }
    }
    throw new Error(`the stream of run ${handle.workflowId} ended without an outcome`);
  } finally {
    if (timer) clearInterval(timer);
  }
}
