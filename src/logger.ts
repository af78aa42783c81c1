import pino from 'pino';

/**
 * One JSON logger for the API, the worker and the CLI. Redaction is a second
 * line of defence: secrets are kept out of log calls in the first place.
 */
export function createLogger(level = process.env.LOG_LEVEL || 'info') {
  return pino({
    level,
    base: { service: 'workflow-engine' },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        '*.api_token',
        '*.token',
        '*.secrets',
        '*.password',
        'api_token',
        'token',
      ],
      censor: '[redacted]',
    },
  });
}

export type Logger = pino.Logger;
