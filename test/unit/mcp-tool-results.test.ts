import { RunApiError } from '../../src/mcp/run-api-client';
import { apiErrorResult, enclosingPrefixes, toolResult, unexpectedErrorResult } from '../../src/mcp/tool-results';

const text = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text).join('\n');

describe('MCP tool results', () => {
  it('enclosingPrefixes: the namespaces around a type, narrowest first, then everything', () => {
    expect(enclosingPrefixes('esign.resources.get-x')).toEqual(['esign.resources.', 'esign.', '']);
    expect(enclosingPrefixes('dbhost.wait')).toEqual(['dbhost.', '']);
    expect(enclosingPrefixes('plain')).toEqual(['']);
  });

  it('a 422 names every failing field with its rule, the header as the tool argument', () => {
    const err = new RunApiError(422, 'validation_failed', 'x', [
      { field: 'initial_data.base_url', rule: 'format:url', message: 'must be a URL' },
      { field: 'Idempotency-Key', rule: 'format', message: 'must be 1-255 printable ASCII characters' },
    ]);
    const result = apiErrorResult(err, 'start_workflow');
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      [
        'start_workflow was refused and changed nothing. Fix these fields and call start_workflow again:',
        '- initial_data.base_url: must be a URL (rule: format:url)',
        '- idempotency_key: must be 1-255 printable ASCII characters (rule: format)',
      ].join('\n'),
    );
  });

  it('any other refusal says status, code and message', () => {
    const result = apiErrorResult(new RunApiError(409, 'not_failed', 'only a FAILED run can be retried', null), 'retry_workflow');
    expect(text(result)).toBe('retry_workflow was refused: 409 not_failed: only a FAILED run can be retried');
  });

  it('an unreachable API is named with the network error code', () => {
    const err = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    expect(text(unexpectedErrorResult(err, 'get_workflow', 'http://h:1/api'))).toBe(
      'get_workflow failed: the API at http://h:1/api could not be reached (ECONNREFUSED)',
    );
    expect(text(unexpectedErrorResult(new Error('boom'), 'get_workflow', 'http://h:1/api'))).toBe('get_workflow failed: boom');
    const ours = new TypeError("Cannot read properties of undefined (reading 'seq')", { cause: new Error('inner') });
    expect(text(unexpectedErrorResult(ours, 'get_workflow', 'http://h:1/api'))).toBe(
      "get_workflow failed: Cannot read properties of undefined (reading 'seq')",
    );
  });

  it('a success carries a summary and the structured content serialized', () => {
    const result = toolResult('Started wf_1.', { workflow_id: 'wf_1' });
    expect(result).toEqual({
      content: [
        { type: 'text', text: 'Started wf_1.' },
        { type: 'text', text: '{"workflow_id":"wf_1"}' },
      ],
      structuredContent: { workflow_id: 'wf_1' },
    });
  });
});
