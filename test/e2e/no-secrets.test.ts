import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TABLES } from '#shared/definitions/tables.ts';

// Every log line of this file's requests is captured, at the most verbose level.
vi.hoisted(() => {
  process.env.LOG_LEVEL = 'DEBUG';
});

const { dynamo, tableName } = await import('#shared/aws/clients.ts');
const { call, startTestGateway } = await import('#test/support/gateway.ts');
const { aMerchant, anAccount } = await import('#test/support/merchants.ts');

const logged: string[] = [];
const capture = (stream: NodeJS.WriteStream) =>
  vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array) => {
    logged.push(String(chunk));
    return true;
  }) as typeof stream.write);

let gateway: Awaited<ReturnType<typeof startTestGateway>>;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(async () => {
  vi.restoreAllMocks();
  await gateway.close();
});

describe('secrets', () => {
  it('appear in no log line and no stored item, whatever the request', async () => {
    const merchant = await aMerchant({ allowedIps: ['127.0.0.0/8', '::1/128'] });
    capture(process.stdout);
    capture(process.stderr);
    const good = merchant.headers;
    const wrong = { ...merchant.headers, 'X-API-Secret': `${merchant.apiSecret}x` };
    await call(gateway, 'GET', '/balance', { headers: good });
    await call(gateway, 'GET', '/balance', { headers: wrong });
    await call(gateway, 'POST', '/validate-account', {
      headers: good,
      body: { account_number: anAccount('058'), bank_code: '058' },
    });
    await call(gateway, 'POST', '/validate-account', {
      headers: good,
      body: { account_number: anAccount('058', '88888'), bank_code: '058' },
    });
    await call(gateway, 'POST', '/validate-account', { headers: good, rawBody: '{bad' });
    // The secret typed where a reference goes: a 404, its path logged without it.
    await call(gateway, 'GET', `/transactions/${merchant.apiSecret}`, { headers: good });
    vi.restoreAllMocks();

    expect(logged.join('')).toContain('request completed');
    expect(logged.join('')).toContain('authentication failed');
    expect(logged.join('')).toContain('"path":"/transactions/sk_[redacted]"');
    for (const line of logged) {
      expect(line).not.toContain(merchant.apiSecret);
      expect(line).not.toContain(merchant.apiSecret.slice(3));
    }
    for (const table of Object.keys(TABLES) as (keyof typeof TABLES)[]) {
      const { Items } = await dynamo.send(new ScanCommand({ TableName: tableName(table) }));
      expect(JSON.stringify(Items ?? [])).not.toContain(merchant.apiSecret.slice(3));
    }
  });
});
