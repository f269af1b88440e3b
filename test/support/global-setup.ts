import { freePort } from '#infra/local/process.ts';
import { startLocalServices } from '#infra/local/services.ts';

/**
 * Starts DynamoDB Local (in memory), the local SQS server and the sandbox partner once per test run.
 * Their environment is set before the test workers start, so the handlers under test read it at
 * import exactly as they read Lambda's.
 */
export default async function setup() {
  const services = await startLocalServices({
    ports: { dynamodb: await freePort(), sqs: await freePort(), sandbox: await freePort() },
    tablePrefix: 'test-',
    sandboxHangMs: 3000,
  });
  Object.assign(process.env, services.env, {
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'SILENT',
    PARTNER_TIMEOUT_MS: '1000',
    API_KEY_PEPPER: 'test-pepper-0123456789abcdef0123456789abcdef',
  });
  return () => services.stop();
}
