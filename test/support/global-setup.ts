import path from 'node:path';
import { freePort } from '#infra/local/process.ts';
import { startRuntime } from '#infra/local/runtime.ts';
import { startLocalServices } from '#infra/local/services.ts';

/** The webhook secret of the test run's sandbox partner. */
export const TEST_WEBHOOK_SECRET = `whsec_${Buffer.from('test-webhook-secret-0123456789abcdef').toString('base64')}`;

/**
 * Starts the local stack once per test run, as `npm start` does: DynamoDB Local (in memory), the
 * local SQS server, the sandbox partner, a gateway that receives the sandbox's webhooks, and the
 * queue poller driving the consumer. The environment is set before the test workers start, so the
 * handlers under test read it at import exactly as they read Lambda's.
 */
export default async function setup() {
  const gatewayPort = await freePort();
  const services = await startLocalServices({
    ports: {
      dynamodb: await freePort(),
      sqs: await freePort(),
      sandbox: await freePort(),
      cognito: await freePort(),
    },
    tablePrefix: 'test-',
    sandbox: {
      hangMs: 3000,
      webhookUrl: `http://127.0.0.1:${gatewayPort}/webhooks/payments`,
      webhookSecret: TEST_WEBHOOK_SECRET,
      settleAfterMs: 500,
    },
  });
  Object.assign(process.env, services.env, {
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'SILENT',
    PARTNER_TIMEOUT_MS: '1000',
    API_KEY_PEPPER: 'test-pepper-0123456789abcdef0123456789abcdef',
    PARTNER_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
    WEBHOOK_GATEWAY_URL: `http://127.0.0.1:${gatewayPort}`,
    // Requery quickly, so tests see a lost webhook's transfer settled within seconds.
    TRANSFER_REQUERY_AFTER_SECONDS: '2',
    TRANSFER_REQUERY_INTERVAL_SECONDS: '1',
    MERCHANT_WEBHOOK_KEY: 'test-merchant-webhook-key-0123456789abcdef',
    // Receivers in the tests are on loopback; a short retry schedule (API.md §8) keeps tests quick.
    MERCHANT_WEBHOOK_ALLOW_PRIVATE: 'true',
    MERCHANT_WEBHOOK_RETRY_SCHEDULE: '1,1,2',
    MERCHANT_WEBHOOK_TIMEOUT_MS: '5000',
  });
  const runtime = await startRuntime({
    port: gatewayPort,
    rootDir: path.resolve(import.meta.dirname, '..', '..'),
    env: services.env,
  });
  return async () => {
    await runtime.stop();
    await services.stop();
  };
}
