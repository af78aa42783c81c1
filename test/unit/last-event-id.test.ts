import { ApiError } from '../../src/common/api-error';
import { MAX_SEQ, parseLastEventId } from '../../src/runs/last-event-id';

describe('Last-Event-ID', () => {
  it.each([
    [undefined, 0],
    ['', 0],
    ['0', 0],
    ['7', 7],
    ['007', 7],
    [String(MAX_SEQ), MAX_SEQ],
  ])('%p resumes after seq %p', (raw, seq) => {
    expect(parseLastEventId(raw)).toBe(seq);
  });

  it.each(['2147483648', '99999999999999999999', '9'.repeat(400)])('%p, beyond every seq the column holds, is past the end', (raw) => {
    expect(parseLastEventId(raw)).toBe(MAX_SEQ);
  });

  it.each(['-1', 'abc', '1e3', '0x10', '1.5', '1 2', ' 3', '4 ', '+5', '١٢'])('%p is a 422 naming the header', (raw) => {
    let thrown: unknown;
    try {
      parseLastEventId(raw);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({
      status: 422,
      code: 'validation_failed',
      details: [{ field: 'Last-Event-ID', rule: 'format:regex', message: expect.stringContaining('digits only') }],
    });
  });
});
