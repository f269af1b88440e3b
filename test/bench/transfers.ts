import { toNuban } from '#shared/banks/nuban.ts';
import type { Samples } from './http.ts';

/**
 * Transfers per second: `POST /transfers` through the local gateway (the debit in one ledger
 * transaction, then the sandbox partner's call and the settlement), one worker per payer (as the
 * raw transactions use one merchant per worker: debits of one merchant serialise on its balance),
 * each to a fresh account at a sandbox bank that succeeds; every one must answer 201.
 */
export async function transferLoad(options: {
  url: string;
  /** One payer's credentials per worker. */
  payers: Record<string, string>[];
  count: number;
}): Promise<Samples> {
  const latencies: number[] = [];
  let failures = 0;
  let issued = 0;
  const run = Date.now().toString(36);
  const started = performance.now();
  const worker = async (headers: Record<string, string>) => {
    while (issued < options.count) {
      const n = issued++;
      const body = JSON.stringify({
        reference: `bench-${run}-${n}`,
        amount: 1_000,
        account_number: toNuban('058', String(100_000_000 + n).padStart(9, '0')),
        bank_code: '058',
      });
      const sent = performance.now();
      const response = await fetch(options.url, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body,
      });
      await response.arrayBuffer();
      if (response.status === 201) latencies.push(performance.now() - sent);
      else failures++;
    }
  };
  await Promise.all(options.payers.map(worker));
  return { latencies, failures, seconds: (performance.now() - started) / 1000 };
}
