/** Injection tokens for the dependencies main.ts builds once and hands to Nest. */
export const CONFIG = Symbol('CONFIG');
export const LOGGER = Symbol('LOGGER');
export const DATABASE = Symbol('DATABASE');
export const TEMPORAL_CLIENTS = Symbol('TEMPORAL_CLIENTS');
export const CONNECTIONS = Symbol('CONNECTIONS');
/** ENGINE_SECRET_KEY: what per-purpose keys are derived from (activities/secret-box.ts). */
export const MASTER_KEY = Symbol('MASTER_KEY');
export const IDENTITY = Symbol('IDENTITY');
