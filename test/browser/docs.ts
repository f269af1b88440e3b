import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '#infra/openapi/document.ts';
import { MERCHANT_ROUTES as ROUTES } from '#shared/definitions/routes.ts';

/** The events the document lists under `webhooks` (rendered as operations too). */
const WEBHOOK_OPERATIONS = Object.keys(buildOpenApiDocument('').webhooks ?? {}).length;

import { checks, launchChromium, runBrowserTest, stopChecked, watch } from '#test/browser/harness.ts';
import { startNpmStart } from '#test/support/npm-start.ts';

/**
 * `npm run test:browser`: opens the docs page of a real `npm start` in Debian's Chromium (headless,
 * no network but loopback, 1280 px wide), checks that every operation is rendered, bodies with
 * alternatives name them, examples carry the API's own messages, no code block overflows, no
 * request fails, the console shows no error and the page asked nothing of any host but localhost,
 * and saves a screenshot to test-results/docs.png.
 */
const root = path.resolve(import.meta.dirname, '..', '..');
/** The window's width, in CSS pixels. */
const WIDTH = 1280;
const { check, summary } = checks();

async function main(): Promise<number> {
  const service = await startNpmStart({ LOG_LEVEL: 'WARN' });
  const browser = await launchChromium();
  try {
    // 1280 px: a common laptop width, where the code blocks once ran off the page.
    const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
    const { requested, failed, consoleErrors, outside: outsideOf } = watch(page);
    const response = await page.goto(`${service.url}/docs`, { waitUntil: 'load' });
    check('GET /docs answers 200 with HTML', response?.status() === 200);

    const operations = page.locator('[data-section-id^="operation/"]');
    // The routes, then the merchant webhooks (the events pushed to merchants' endpoints).
    const expected = ROUTES.length + WEBHOOK_OPERATIONS;
    await operations
      .nth(expected - 1)
      .waitFor({ state: 'attached', timeout: 30_000 })
      .catch(() => undefined);
    const rendered = await operations.evaluateAll((nodes) =>
      nodes.map((node) => node.getAttribute('data-section-id')),
    );
    check(
      `all ${ROUTES.length} operations and ${WEBHOOK_OPERATIONS} merchant webhooks are listed`,
      rendered.length === expected &&
        rendered.filter((id) => id?.startsWith('operation/on')).length === WEBHOOK_OPERATIONS,
      `found ${rendered.length}: ${rendered.join(', ')}`,
    );
    const text = await page.locator('body').innerText();
    const missing = ROUTES.filter((route) => !text.includes(route.summary)).map((route) => route.summary);
    check('every operation shows its summary', missing.length === 0, `missing ${missing.join(', ')}`);
    check(
      'the getting-started guide is rendered',
      text.includes('Sandbox test accounts') &&
        text.includes('timingSafeEqual') &&
        text.includes('webhook-id'),
    );

    check(
      "the first call uses this service's own address",
      text.includes(`curl -sS ${service.url}/api/v1/developer/balance`),
    );
    const transfer = page.locator('[data-section-id="operation/createTransfer"]');
    const transferText = await transfer.innerText();
    const forms = ['By beneficiary', 'By validation session', 'By account number'];
    check(
      'POST /transfers names its body alternatives',
      forms.every((form) => transferText.includes(form)),
      transferText.slice(0, 600),
    );
    const beneficiaryText = await page.locator('[data-section-id="operation/createBeneficiary"]').innerText();
    check(
      'POST /beneficiaries names its body alternatives',
      forms.slice(1).every((form) => beneficiaryText.includes(form)),
    );
    const webhookText = await page.locator('[data-section-id="operation/receivePartnerWebhook"]').innerText();
    check(
      "the partner webhook's events are named, never a bare 'object'",
      webhookText.includes('Payment received') &&
        webhookText.includes('Transfer settled') &&
        ![transferText, beneficiaryText, webhookText].some((text) => /One of\s*object/.test(text)),
    );
    // The response samples show one status at a time: 201 (created), then 200 (a retry).
    const samples = async (status: string) => {
      await transfer.getByRole('tab', { name: status, exact: true }).last().click();
      return transfer.innerText();
    };
    const created = await samples('201');
    const retried = await samples('200');
    check(
      "the transfer examples' messages are the API's own",
      created.includes('"message": "Transfer created"') &&
        retried.includes('"message": "Transfer already exists"') &&
        !created.includes('"Send a transfer"'),
      created.slice(created.indexOf('Response samples'), created.indexOf('Response samples') + 300),
    );

    await page.waitForLoadState('networkidle', { timeout: 10_000 }).catch(() => undefined);
    // Every code block (the guide's and the samples') stays inside its container and the window.
    // (`pre`: the guide's code; `.redoc-json`: the request and response samples.)
    const overflowing = await page.locator('pre, .redoc-json').evaluateAll(
      (blocks, width) =>
        blocks
          .filter((block) => block.getClientRects().length > 0)
          .filter((block) => {
            const box = block.getBoundingClientRect();
            const container = block.parentElement ?? block;
            const parent = container.getBoundingClientRect();
            return (
              block.scrollWidth > block.clientWidth + 1 ||
              container.scrollWidth > container.clientWidth + 1 ||
              box.right > Math.min(parent.right, width) + 1 ||
              box.left < parent.left - 1
            );
          })
          .map((block) => (block.textContent ?? '').slice(0, 60)),
      WIDTH,
    );
    // The page's own width: the <html> element's.
    const pageWidth = await page.locator('html').evaluate((html) => html.scrollWidth);
    check(
      `no code block is wider than its column at ${WIDTH} px, and the page does not scroll sideways`,
      overflowing.length === 0 && pageWidth <= WIDTH,
      `page ${pageWidth} px wide; overflowing: ${overflowing.join(' | ')}`,
    );
    check('no request failed (the favicon included)', failed.length === 0, failed.join(', '));
    check('the browser logged no error', consoleErrors.length === 0, consoleErrors.join(' | '));
    const outside = outsideOf();
    check('the page made no request outside localhost', outside.length === 0, outside.join(', '));
    check(
      'it loaded Redoc from the service itself',
      requested.some((url) => url.endsWith('/docs/redoc.standalone.js')),
    );

    mkdirSync(path.join(root, 'test-results'), { recursive: true });
    const screenshot = path.join(root, 'test-results', 'docs.png');
    await page.screenshot({ path: screenshot });
    console.log(`screenshot: ${path.relative(root, screenshot)}`);
  } finally {
    await browser.close();
    await stopChecked(service, check);
  }
  return summary();
}

runBrowserTest(main);
