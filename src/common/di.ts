/** Injection tokens for the dependencies main.ts builds once and hands to Nest. */
export const CONFIG = Symbol('CONFIG');
export const LOGGER = Symbol('LOGGER');
export const DATABASE = Symbol('DATABASE');
export const TEMPORAL_CLIENT = Symbol('TEMPORAL_CLIENT');
export const CONNECTIONS = Symbol('CONNECTIONS');
