/**
 * `npm run paystack:stand-in`: the tests' Paystack stand-in (test/support/paystack-stand-in.ts,
 * written from Paystack's published description) on a port of its own, so `npm start` can run
 * against "Paystack" on a machine with no Paystack account and no internet. It sends its signed
 * events to the local gateway's `/webhooks/paystack`, settles transfers by itself, and takes
 * payments typed on its standard input (it stops when that input ends: run it in a terminal of its
 * own, in the foreground).
 */
import { createInterface } from 'node:readline';
import { holderOf } from '#infra/local/data-lock.ts';
import { changedPortSettings, DEFAULT_PORTS, portSetting } from '#infra/local/ports.ts';
import { DEFAULT_PAYSTACK_SECRET_KEY, startPaystackStandIn } from '#test/support/paystack-stand-in.ts';

const HELP = [
  'Commands (amounts in kobo):',
  '  pay <account_number> <amount>     a payer sends money to a wallet or a virtual account (another',
  '                                    amount than a virtual account expects is refused, as Paystack does)',
  '  reject <account_number> <amount>  Paystack refuses what a payer sends to a virtual account',
  '  problems                          the requests the description refuses, if any',
  '  quit',
].join('\n');

async function main() {
  const port = portSetting(
    'PAYSTACK_STAND_IN_PORT',
    process.env.PAYSTACK_STAND_IN_PORT,
    DEFAULT_PORTS.PAYSTACK_STAND_IN_PORT,
  );
  const gatewayPort = portSetting('PORT', process.env.PORT, DEFAULT_PORTS.PORT);
  const standIn = await startPaystackStandIn({
    port,
    secretKey: DEFAULT_PAYSTACK_SECRET_KEY,
    webhookUrl: `http://127.0.0.1:${gatewayPort}/webhooks/paystack`,
    settleAfterMs: 2_000,
  });
  // Every port it was given is repeated, so the service it prints runs beside another npm start.
  const ports = changedPortSettings(['PORT', 'DYNAMODB_PORT', 'SQS_PORT', 'SANDBOX_PORT', 'COGNITO_PORT'])
    .map((setting) => `${setting} `)
    .join('');
  const dataDir = process.env.DATA_DIR || '.data-paystack';
  // A DATA_DIR in the shell may be a sandbox service's (exported for it): --fresh would empty it.
  const holder = holderOf(dataDir);
  console.log(
    [
      `Paystack stand-in at ${standIn.url} (its events go to http://127.0.0.1:${gatewayPort}/webhooks/paystack)`,
      'In another terminal:',
      `  DATA_DIR=${dataDir} ${ports}PARTNER=paystack PAYSTACK_BASE_URL=${standIn.url} PAYSTACK_SECRET_KEY=${standIn.secretKey} npm start`,
      holder === undefined
        ? '  (a data folder of its own: the stand-in keeps nothing; after restarting it, add -- --fresh)'
        : `  (${dataDir} is in use by a running npm start, process ${holder}: if that is not the Paystack service this command starts, give this one another DATA_DIR, as --fresh empties the folder; the stand-in keeps nothing, so after restarting it, start the Paystack service with -- --fresh)`,
      HELP,
    ].join('\n'),
  );
  const lines = createInterface({ input: process.stdin });
  const stop = async (code: number) => {
    lines.close();
    await standIn.close();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  for await (const line of lines) {
    const [command = '', account = '', amountText = ''] = line.trim().split(/\s+/);
    const amount = Number(amountText);
    try {
      if (command === 'quit') break;
      if (command === '') continue;
      if (command === 'problems') {
        const refused = standIn.requests.filter((request) => request.problems.length > 0);
        console.log(refused.length === 0 ? 'none' : JSON.stringify(refused, null, 2));
      } else if ((command === 'pay' || command === 'reject') && /^\d{10}$/.test(account)) {
        if (!Number.isInteger(amount) || amount < 1)
          throw new Error('the amount must be a whole number of kobo');
        // The newest charge of that number: the stand-in, as Paystack, gives an expired charge's
        // number to a new one.
        const charge = [...standIn.charges].findLast(([, open]) => open.account_number === account)?.[0];
        let sent: { event: { event: string } };
        const expected = charge ? standIn.charges.get(charge)?.amount : undefined;
        if (command === 'reject' || (charge && amount !== expected)) {
          // Paystack takes only a charge's exact amount: any other is returned to the payer.
          if (!charge) throw new Error(`no Pay with Transfer account ${account}`);
          sent = await standIn.rejectCharge(charge, amount);
        } else if (charge) sent = await standIn.payCharge(charge, amount);
        else if (standIn.dedicatedAccounts.has(account))
          sent = await standIn.payDedicatedAccount(account, amount);
        else throw new Error(`no wallet or virtual account ${account} at this stand-in`);
        // Its own delivery (a transfer settling meanwhile sends one too).
        const delivery = standIn.deliveries.findLast((made) => made.event === sent.event);
        const answer = !delivery
          ? 'nothing: it was not sent'
          : delivery.status === undefined
            ? `nothing (${delivery.error ?? 'no answer'})`
            : delivery.status;
        console.log(`${sent.event.event} sent: the service answered ${answer}`);
      } else console.log(HELP);
    } catch (error) {
      console.log(`Refused: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  await stop(0);
}

main().catch((error: unknown) => {
  console.error(`Could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
