export { WorkflowEngine } from './client.js';
export type { ClientOptions, TokenSource } from './transport.js';
export { RunHandle } from './handle.js';
export type { RunEvent, TransitionEvent, CompletedEvent, FailedEvent } from './events.js';
export type { StartOptions, RunList } from './managers/workflows.js';
export * from './errors.js';
export type * from './types.js';
export { generateBindings, writeBindings, type GenerateOptions } from './generate/generate.js';
export * from './generated/index.js';
