import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { takeClientIpRequest } from '#shared/limits/client-ip.ts';

/**
 * The per-client-IP limit that failed attempts and requests without a key share (API.md §2, §11),
 * against DynamoDB Local, on a clock the test moves: 100 in any rolling 60 seconds, not per clock
 * minute; a refused request is not counted; of racing requests, exactly 100 get through.
 */
// A whole minute an hour ahead: items expire two minutes after their second, and DynamoDB Local
// deletes expired items, so the test's clock must not be in the past.
const START = Math.floor(Date.now() / 60_000) * 60_000 + 3_600_000;

function aClient() {
  const apiId = `api-${randomUUID()}`;
  return (at: number) => takeClientIpRequest(apiId, '198.51.100.9', at);
}

async function takeMany(
  take: (at: number) => ReturnType<typeof takeClientIpRequest>,
  count: number,
  at: number,
) {
  const decisions = [];
  for (let i = 0; i < count; i++) decisions.push(await take(at));
  return decisions;
}

describe('the per-client-IP limit', () => {
  it('allows 100 in 60 seconds, counting down, then refuses with the seconds until there is room', async () => {
    const take = aClient();
    const decisions = await takeMany(take, 100, START);
    expect(decisions.map((d) => d.allowed)).toEqual(Array(100).fill(true));
    expect(decisions.map((d) => d.remaining)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
    const refused = await take(START + 500);
    expect(refused).toEqual({ allowed: false, limit: 100, remaining: 0, retryAfterSeconds: 60 });
  });

  it('is a rolling window: 100 just before a minute ends leave nothing just after it', async () => {
    const take = aClient();
    const lateInMinute = START + 59_500;
    await takeMany(take, 100, lateInMinute);
    // A fixed clock-minute window would start afresh here, one second later.
    expect((await take(START + 60_500)).allowed).toBe(false);
    // Room again once the 100 are 60 seconds old.
    expect((await take(lateInMinute + 60_000)).allowed).toBe(true);
  });

  it('frees the oldest seconds first, and says when', async () => {
    const take = aClient();
    await takeMany(take, 50, START);
    await takeMany(take, 50, START + 30_000);
    const refused = await take(START + 45_000);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterSeconds).toBe(15);
    // The first 50 have left the window: 50 more fit, not 51.
    const after = await takeMany(take, 51, START + 60_000);
    expect(after.map((d) => d.allowed)).toEqual([...Array(50).fill(true), false]);
    expect(after.at(-1)?.retryAfterSeconds).toBe(30);
  });

  it('does not count refused requests: hammering past the limit does not extend it', async () => {
    const take = aClient();
    await takeMany(take, 100, START);
    const hammered = await takeMany(take, 30, START + 10_000);
    expect(hammered.every((d) => !d.allowed)).toBe(true);
    expect((await take(START + 60_000)).allowed).toBe(true);
  });

  it('lets exactly 100 of 150 racing requests through, and keeps only those counted', async () => {
    const apiId = `api-${randomUUID()}`;
    const decisions = await Promise.all(
      Array.from({ length: 150 }, () => takeClientIpRequest(apiId, '198.51.100.10', START)),
    );
    const allowed = decisions.filter((d) => d.allowed).length;
    expect(allowed).toBe(100);
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName('clientIpLimits'),
        Key: { client_key: `${apiId}#198.51.100.10`, second: Math.floor(START / 1000) },
        ConsistentRead: true,
      }),
    );
    expect(Item?.hits).toBe(allowed);
  });

  it('counts each API and each address apart', async () => {
    const apiId = `api-${randomUUID()}`;
    await takeMany((at) => takeClientIpRequest(apiId, '198.51.100.11', at), 100, START);
    expect((await takeClientIpRequest(apiId, '198.51.100.11', START)).allowed).toBe(false);
    expect((await takeClientIpRequest(apiId, '198.51.100.12', START)).allowed).toBe(true);
    expect((await takeClientIpRequest(`${apiId}-other`, '198.51.100.11', START)).allowed).toBe(true);
  });
});
