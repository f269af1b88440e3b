import { parseArgs } from 'node:util';

/**
 * `npm run sandbox -- pay --account <number> --amount <kobo>`: a customer pays into an account at
 * the sandbox bank, which signs and sends `payment.received` to the running service.
 */
const USAGE = `Usage:
  npm run sandbox -- pay --account <account_number> --amount <kobo> [--session-id <id>]
  (npm start must be running; --session-id repeats an earlier payment, as a redelivery would)`;

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      account: { type: 'string' },
      amount: { type: 'string' },
      'session-id': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const fail = (message: string): never => {
    console.error(`${message}\n\n${USAGE}`);
    process.exit(2);
  };
  if (values.help) return console.log(USAGE);
  if (positionals[0] !== 'pay') fail('the command is pay');
  if (!/^\d{10}$/.test(values.account ?? '')) fail('--account must be a 10-digit account number');
  if (!/^[1-9]\d{0,14}$/.test(values.amount ?? '')) fail('--amount must be a positive whole number of kobo');
  const sandbox = `http://127.0.0.1:${process.env.SANDBOX_PORT ?? 3100}`;
  const response = await fetch(`${sandbox}/v1/_simulate/payment`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      account_number: values.account,
      amount: Number(values.amount),
      session_id: values['session-id'],
    }),
  }).catch(() => fail(`Could not reach the sandbox partner at ${sandbox}: is \`npm start\` running?`));
  const result = (await response.json()) as Record<string, unknown>;
  if (!response.ok) fail(`The sandbox refused: ${JSON.stringify(result)}`);
  console.log(
    [
      `Paid ${values.amount} kobo into ${values.account}`,
      `  session_id:  ${result.session_id}`,
      `  webhook:     ${result.webhook_status} ${result.webhook_response}`,
      'The credit is applied as soon as the consumer takes the event off the queue.',
    ].join('\n'),
  );
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`Failed: ${String((error as Error)?.message ?? error)}`);
  process.exit(1);
});
