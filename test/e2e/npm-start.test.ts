import { afterAll, describe, expect, it } from 'vitest';
import { type RunningService, startNpmStart } from '#test/support/npm-start.ts';

let service: RunningService | undefined;
afterAll(async () => {
  await service?.crash();
});

describe('npm start', () => {
  it('serves the API from the real start script and leaves no process behind on SIGTERM', async () => {
    service = await startNpmStart({ TABLE_PREFIX: 'start-test-' });
    expect(service.output()).toContain(`curl -s ${service.url}/api/v1/developer/banks`);
    expect(service.output()).toMatch(/X-API-Key: +pk_[0-9a-f]{32}/);

    const response = await fetch(`${service.url}/banks/list`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe('success');

    expect(await service.stop()).toBe(0);
    // DynamoDB Local (a Java child) must be gone: nothing listens on its port any more.
    await expect(fetch(`http://127.0.0.1:${service.ports.dynamodb}`)).rejects.toThrow();
  }, 90_000);
});
