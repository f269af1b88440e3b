import { afterEach, describe, expect, it, vi } from 'vitest';
import { JsonLogger } from '#shared/logger.ts';

/** What the logger wrote while `work` ran: JSON lines, per stream. */
function captured(work: () => void): {
  stdout: Record<string, unknown>[];
  stderr: Record<string, unknown>[];
} {
  const lines = { stdout: [] as string[], stderr: [] as string[] };
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => lines.stdout.push(String(chunk)) > 0);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => lines.stderr.push(String(chunk)) > 0);
  work();
  vi.restoreAllMocks();
  const parse = (all: string[]) => all.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { stdout: parse(lines.stdout), stderr: parse(lines.stderr) };
}

describe('the JSON logger', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes one JSON line per entry with level, message, timestamp, service and the request keys', () => {
    const logger = new JsonLogger('naira-pay', 'INFO');
    const { stdout } = captured(() => {
      logger.appendKeys({ request_id: 'req-1' });
      logger.info('request completed', { status: 200 });
      logger.resetKeys();
      logger.info('next');
    });
    expect(stdout[0]).toMatchObject({
      level: 'INFO',
      message: 'request completed',
      service: 'naira-pay',
      request_id: 'req-1',
      status: 200,
    });
    expect(Date.parse(String(stdout[0]?.timestamp))).not.toBeNaN();
    expect(stdout[1]).not.toHaveProperty('request_id');
  });

  it("keeps each invocation's keys its own when invocations run side by side (the local runtime)", async () => {
    const logger = new JsonLogger('naira-pay', 'INFO');
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => lines.push(String(chunk)) > 0);
    const turn = () => new Promise((resolve) => setTimeout(resolve, 5));
    // As the gateway runs two requests at once: each one resets the keys and appends its id, then
    // waits on I/O while the other does the same, then logs.
    const invocation = async (requestId: string) => {
      logger.resetKeys();
      logger.appendKeys({ request_id: requestId });
      await turn();
      logger.info('partner unavailable');
      await turn();
      logger.appendKeys({ merchant_id: `mer_${requestId}` });
      logger.info('request completed');
    };
    await Promise.all([invocation('req-a'), invocation('req-b'), invocation('req-c')]);
    vi.restoreAllMocks();
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries).toHaveLength(6);
    for (const id of ['req-a', 'req-b', 'req-c']) {
      expect(entries.filter((entry) => entry.request_id === id)).toEqual([
        expect.objectContaining({ message: 'partner unavailable' }),
        expect.objectContaining({ message: 'request completed', merchant_id: `mer_${id}` }),
      ]);
    }
  });

  it("gives work that outlives its invocation keys of its own, and leaves the invocation's as they were", () => {
    const logger = new JsonLogger('naira-pay', 'INFO');
    const { stdout } = captured(() => {
      logger.resetKeys();
      logger.appendKeys({ request_id: 'req-A' });
      logger.withOwnKeys({ task: 'shared load' }, () => {
        logger.appendKeys({ page: 2 });
        logger.info('inside');
      });
      logger.info('after');
    });
    expect(stdout[0]).toMatchObject({ message: 'inside', task: 'shared load', page: 2 });
    expect(stdout[0]).not.toHaveProperty('request_id');
    expect(stdout[1]).toMatchObject({ message: 'after', request_id: 'req-A' });
    expect(stdout[1]).not.toHaveProperty('task');
    expect(stdout[1]).not.toHaveProperty('page');
  });

  it('keeps entries below its level out, and sends warnings and errors to stderr', () => {
    const logger = new JsonLogger('s', 'WARN');
    const { stdout, stderr } = captured(() => {
      logger.debug('d');
      logger.info('i');
      logger.warn('w');
      logger.error('e');
    });
    expect(stdout).toEqual([]);
    expect(stderr.map((line) => line.level)).toEqual(['WARN', 'ERROR']);
    const silent = new JsonLogger('s', 'SILENT');
    expect(captured(() => silent.error('e')).stderr).toEqual([]);
    silent.setLogLevel('DEBUG');
    expect(silent.getLevelName()).toBe('DEBUG');
    expect(captured(() => silent.debug('d')).stdout).toHaveLength(1);
  });

  it('writes an error as its name, message and stack, and never throws on a field it cannot write', () => {
    const logger = new JsonLogger('s', 'INFO');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const { stderr } = captured(() => {
      logger.error('request failed', new TypeError('boom'));
      logger.error('consumer failed', { reason: new RangeError('bad'), count: 10n });
      logger.error('cyclic', { cycle });
    });
    expect(stderr[0]?.error).toMatchObject({ name: 'TypeError', message: 'boom', stack: expect.any(String) });
    expect(stderr[1]).toMatchObject({ reason: { name: 'RangeError', message: 'bad' }, count: '10' });
    expect(stderr[2]).toMatchObject({ level: 'ERROR', message: 'cyclic' });
  });
});
