/**
 * Loaded once per workflow thread, before the first run, and shared by every run after it
 * (the bundle's `preloadModules`, src/worker/worker.ts). Without it each run's sandbox evaluated
 * zod anew: ~4 ms of a workflow thread's CPU per run, more than the rest of a short run's activations.
 *
 * The sandbox then freezes what it preloaded, zod's global config included, so zod's first-use
 * set-up must happen here, before the freeze: its first schema registers the default locale and
 * memoizer, and its first object parse probes whether it may compile with `new Function`.
 * A run that did any of these later would fail on the frozen object.
 */
import { z } from 'zod';

z.object({ preloaded: z.string() }).safeParse({ preloaded: 0 });
