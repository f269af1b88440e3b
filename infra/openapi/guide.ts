/**
 * The getting-started section of the docs page (Markdown, rendered by Redoc above the reference),
 * with the base URL of the service that serves it (a placeholder where that is only relative).
 */
export function gettingStarted(baseUrl: string): string {
  const base = /^https?:\/\//.test(baseUrl) ? baseUrl.replace(/\/$/, '') : 'https://<your API URL>';
  return `
Payments and banking for Nigerian businesses, in naira. Every amount is an integer number of
**kobo** (NGN 1 = 100 kobo). Every route is served under \`/api/v1/developer\` and at its bare
path.

## Keys

Every endpoint but \`GET /banks\` and the partner webhook needs two headers: \`X-API-Key\`
(\`pk_…\`) and \`X-API-Secret\` (\`sk_…\`). Your key pair comes from the operator of this service
(locally, \`npm start\` creates a demo merchant and prints its pair). The secret is shown once and
stored only as a hash: keep it in an environment variable, never in client-side code, ask for keys
restricted to your servers' IPs, and rotate them (a new pair first, then the old one revoked).
Any authentication failure is \`401 {"status":"error","message":"Invalid API credentials"}\`. At
most 100 requests per key per minute: request 101 is \`429\` with \`Retry-After\`.

## First call

\`\`\`sh
curl -sS ${base}/api/v1/developer/balance \\
  -H "X-API-Key: $NAIRA_API_KEY" -H "X-API-Secret: $NAIRA_API_SECRET"
\`\`\`

Answers are \`{"status":"success","message":…,"data":…}\` (lists add \`meta.next_cursor\`) or
\`{"status":"error","message":…,"code":…}\` with a machine code; every answer has an
\`X-Request-Id\`.

## Sandbox test accounts

The local partner bank resolves every NUBAN-valid number at a listed bank to a name derived from
the number. Serials (the first 9 digits) starting with \`99999\` do not exist
(\`account_not_found\`), \`88888\` time out (\`partner_unavailable\`), \`77777\` refuse transfers
(the transfer ends \`failed\` with a reversal), \`66666\` leave transfers pending until the bank's
\`transfer.success\` webhook, \`55555\` leave them pending and succeed without a webhook, \`44444\`
leave them pending and fail without a webhook, \`11111\` make the transfer but lose its answer
(the service's requery of pending transfers settles all three). Ready-made, bank \`011\`:
\`0000014579\`, \`9999900003\`, \`8888800006\`, \`7777700009\`, \`6666600002\`, \`5555500005\`,
\`4444400008\`, \`1111100007\`. Pay into a virtual account with
\`npm run sandbox -- pay --account <number> --amount <kobo>\`.

## Webhooks: events pushed to you

Every credited payment, every virtual account that becomes paid and every transfer that ends
\`success\`, \`failed\` or \`reversed\` is an **event** (\`GET /events\`), pushed to the endpoints you
register with \`POST /webhook-endpoints\` (the answer shows the endpoint's \`secret\` once). The
payloads are listed under *Webhooks* in this reference. Each delivery is a \`POST\` of the event with
Standard Webhooks headers: \`webhook-id\` (the event id, the same on every retry and redelivery:
dedupe on it), \`webhook-timestamp\` and \`webhook-signature\`. Answer 2xx within 10 seconds; anything
else is retried after 5 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h and 24 h three times. Every attempt
shows in \`GET /events/{id}\`; \`POST /events/{id}/redeliver\` sends one again. Locally,
\`npm run sandbox -- listen\` registers a receiver and prints what arrives.

Verify every delivery before you trust it (TypeScript, Node; or any Standard Webhooks library):

\`\`\`ts
import { createHmac, timingSafeEqual } from 'node:crypto';

export function verify(secret: string, headers: Record<string, string>, rawBody: string): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false; // ±5 minutes
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(\`\${id}.\${timestamp}.\${rawBody}\`).digest();
  return signatures.split(' ').some((part) => {
    const given = Buffer.from(part.replace(/^v1,/, ''), 'base64');
    return part.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
\`\`\`

Always verify the **raw** body (re-serialised JSON does not match). After a secret rotation,
deliveries carry one signature per secret for 24 hours, so either secret verifies.
`;
}
