/** `<connection_uuid>/<secret_name>`, the form; which secrets it may name is resolveSecretRef's rule. */
export const SECRET_REF = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/([A-Za-z0-9_.-]{1,100})$/i;

/** What hook.receive-webhook posts without a test_event. */
export const DEFAULT_TEST_EVENT = { type: 'engine.test', data: { message: 'test event sent by hook.receive-webhook' } };
