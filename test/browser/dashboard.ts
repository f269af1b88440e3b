import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import jsQRModule from 'jsqr';
import type { Locator, Page, Request, Route } from 'playwright-core';
import { freePort } from '#infra/local/process.ts';
import { toNuban } from '#shared/banks/nuban.ts';
import { checks, launchChromium, runBrowserTest, stopChecked, watch } from '#test/browser/harness.ts';
import { totpCode } from '#test/support/dashboard.ts';
import { startNpmStart } from '#test/support/npm-start.ts';
import { startReceiver } from '#test/support/receiver.ts';

/**
 * `npm run test:browser` (the dashboard half): a real `npm start`, Debian's Chromium, and the demo
 * user. Signs in; creates a key and calls the API with it; rolls it (both keys work); revokes the
 * old one (refused within 60 s); adds a webhook endpoint on a local receiver, sees a payment's event
 * with its attempts and resends it; exports transactions as CSV and checks them against
 * GET /transactions; scans every page with axe-core (no serious or critical violation); saves a
 * screenshot of every page to test-results/dashboard/; and fails on any request off this machine,
 * any failed request or console error.
 */
const root = path.resolve(import.meta.dirname, '..', '..');
const shots = path.join(root, 'test-results', 'dashboard');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const run = promisify(execFile);
const { check, summary } = checks();

/** The line of npm start's output that starts with `label`, its value. */
const printed = (output: string, label: string) =>
  new RegExp(`^\\s*${label}\\s*(\\S+)\\s*$`, 'm').exec(output)?.[1] ?? '';

/** jsQR's CommonJS module is the function itself; its types call it the default export. */
const jsQR = jsQRModule as unknown as typeof jsQRModule.default;

/** The side, in pixels, at which the page's QR code is drawn to be scanned. */
const QR_SCAN_PX = 300;

/**
 * What the page's QR code says, read as a scanner reads it: the drawn SVG as pixels (in the page,
 * on a canvas), decoded by jsQR here.
 */
async function scanQrCode(page: Page): Promise<string | undefined> {
  const pixels = (await page.evaluate(`(async () => {
    const svg = new XMLSerializer().serializeToString(document.querySelector('svg.qr'));
    const image = new Image();
    image.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(svg);
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = ${QR_SCAN_PX};
    const drawing = canvas.getContext('2d');
    drawing.drawImage(image, 0, 0, ${QR_SCAN_PX}, ${QR_SCAN_PX});
    return Array.from(drawing.getImageData(0, 0, ${QR_SCAN_PX}, ${QR_SCAN_PX}).data);
  })()`)) as number[];
  return jsQR(Uint8ClampedArray.from(pixels), QR_SCAN_PX, QR_SCAN_PX)?.data;
}

/** RFC 4180 CSV as records of fields: a quoted field may hold commas, doubled quotes, line breaks. */
function parseCsv(text: string): string[][] {
  const field = /(?:"((?:[^"]|"")*)"|([^",\r\n]*))(,|\r\n|$)/y;
  const records: string[][] = [];
  let record: string[] = [];
  while (field.lastIndex < text.length) {
    const [, quoted, plain = '', end] = field.exec(text) ?? [];
    if (end === undefined) throw new Error(`not CSV at ${field.lastIndex}`);
    record.push(quoted === undefined ? plain : quoted.replaceAll('""', '"'));
    if (end !== ',') {
      records.push(record);
      record = [];
    }
  }
  return records;
}

/** Scans the page with axe-core, run through DevTools (the page's CSP keeps injected scripts out). */
async function accessible(page: Page, name: string) {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate('axe.run(document).then((result) => result.violations)')) as {
    id: string;
    impact: string;
    nodes: unknown[];
  }[];
  const bad = violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  check(
    `${name}: no serious or critical accessibility violation (axe-core)`,
    bad.length === 0,
    bad.map((violation) => `${violation.id} (${violation.impact}, ${violation.nodes.length})`).join(', '),
  );
  await page.screenshot({
    path: path.join(shots, `${name.toLowerCase().replace(/\W+/g, '-')}.png`),
    fullPage: true,
  });
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Answers a list request with one item a page, by the request's cursor: `pages[cursor]` is the
 * page's label and its next cursor ('' the first page). Answered in the browser: no request spent.
 */
const pagedBy =
  (pages: Record<string, [label: string, next: string | null]>, itemOf: (label: string) => object) =>
  (route: Route) => {
    const [label = 'NO-SUCH-PAGE', next = null] =
      pages[new URL(route.request().url()).searchParams.get('cursor') ?? ''] ?? [];
    return route.fulfill({
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify({
        status: true,
        message: 'ok',
        data: [itemOf(label)],
        meta: { next_cursor: next },
      }),
    });
  };

/** A walk over a list's pages by its buttons: in `steps`, what `table` shows after each, and the buttons' states. */
function pagerWalk(page: Page, table: Locator) {
  const steps: string[] = [];
  const button = (name: string) => page.getByRole('button', { name, exact: true });
  return {
    steps,
    /** Waits (up to 5 s) for `label` in the table, then notes the labels it shows. */
    reaches: async (label: string) => {
      await table
        .getByText(label, { exact: true })
        .waitFor({ timeout: 5_000 })
        .catch(() => undefined);
      steps.push((await table.locator('tbody code').allInnerTexts()).join());
    },
    /** Clicks a button, or notes that it could not be (disabled). */
    press: (name: string) =>
      button(name)
        .click({ timeout: 3_000 })
        .catch(() => steps.push(`${name} disabled`)),
    /** Notes whether a button is enabled, as `<note> on` or `<note> off`. */
    note: async (note: string, name: string) =>
      steps.push(`${note} ${(await button(name).isEnabled()) ? 'on' : 'off'}`),
  };
}

async function main(): Promise<number> {
  mkdirSync(shots, { recursive: true });
  const service = await startNpmStart({ LOG_LEVEL: 'WARN' });
  const output = service.output();
  const dashboardUrl = printed(output, 'Dashboard:');
  const email = printed(output, 'Demo user:');
  const password = printed(output, 'Password:');
  const demo = {
    'X-API-Key': printed(output, 'X-API-Key:'),
    'X-API-Secret': printed(output, 'X-API-Secret:'),
  };
  check(
    'npm start prints the dashboard URL and the demo user',
    /\/dashboard\/$/.test(dashboardUrl) && !!email && !!password,
  );
  const api = (method: string, route: string, headers: Record<string, string>, body?: unknown) =>
    fetch(`${service.url}/api/v1/developer${route}`, {
      method,
      headers: { ...headers, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  const statusWith = async (key: { api_key: string; api_secret: string }) =>
    (await api('GET', '/balance', { 'X-API-Key': key.api_key, 'X-API-Secret': key.api_secret })).status;

  const receiver = await startReceiver();
  const browser = await launchChromium();
  try {
    // A user in Lagos (UTC+1), the product's market: their days are not the API's UTC days.
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
      timezoneId: 'Africa/Lagos',
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.url });
    const page = await context.newPage();
    const seen = watch(page);
    /** The button named so in the row of a key (or an endpoint) named so. */
    const rowButton = (row: string, name: string) =>
      page.getByRole('row', { name: new RegExp(row) }).getByRole('button', { name });
    /** Opens the Roll dialog of a key's row and chooses when the old key expires; the dialog. */
    const openRoll = async (key: string, expires: string) => {
      await rowButton(key, 'Roll').click();
      const dialog = page.getByRole('dialog', { name: `Roll ${key}` });
      await dialog.getByLabel('Old key expires').selectOption({ label: expires });
      return dialog;
    };
    /** Whether focus comes to the element named so (a tag and its text), within 3 s. */
    const focusReaches = (want: string) =>
      until(
        `focus on ${want}`,
        async () =>
          (await page.evaluate(
            "(() => { const a = document.activeElement; return a ? a.tagName + ':' + (a.textContent ?? '').trim() : ''; })()",
          )) === want,
        3_000,
      ).catch(() => false);

    const first = await page.goto(dashboardUrl);
    const csp = first?.headers()['content-security-policy'] ?? '';
    check(
      'the dashboard is served with a strict CSP',
      csp.includes("script-src 'self'") && !csp.includes('unsafe'),
    );
    await page.getByLabel('Email').waitFor();
    await accessible(page, 'Sign in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByText('Wallet account').waitFor();
    const wallet = /\(wallet (\d{10})\)/.exec(output)?.[1] ?? '';
    check(
      'the demo user signs in and sees the wallet number',
      !!wallet && (await page.getByText(wallet).count()) > 0,
    );
    await accessible(page, 'Overview');

    // A key asked for, then Sign out, then a sign-in again before its answer comes: the answer, to
    // the session that ended, shows no secret in the new one (it could be another user's).
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    const newKeyRoute = /\/api\/v1\/dashboard\/keys$/;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(newKeyRoute, async (route) => {
      if (route.request().method() === 'POST') await released;
      await route.continue();
    });
    const answeredLate = page.waitForResponse(
      (answer) => newKeyRoute.test(answer.url()) && answer.request().method() === 'POST',
    );
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back on the page the URL names, the API keys.
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    release();
    const lateAnswer = await answeredLate;
    await new Promise((resolve) => setTimeout(resolve, 500));
    check(
      'a key asked for before Sign out and answered after the next sign-in shows no secret in it',
      lateAnswer.status() === 201 &&
        (await page.getByRole('dialog').count()) === 0 &&
        !(await page.content()).includes('sk_'),
      `${lateAnswer.status()}`,
    );
    await page.unroute(newKeyRoute);
    await page.getByRole('link', { name: 'Overview' }).click();

    // Two-factor set-up: the QR code says the otpauth link shown beside it; the app's first code turns it on.
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    await page.getByRole('img', { name: 'QR code of the key, for your authenticator app' }).waitFor();
    const otpauth = await page.locator('#totp-key code.wrap').innerText();
    const totpKey = await page.locator('#totp-key code').first().innerText();
    const scanned = await scanQrCode(page);
    check(
      'the two-factor QR code scans as the otpauth link shown beside it',
      otpauth.startsWith('otpauth://totp/') && otpauth.includes(`secret=${totpKey}`) && scanned === otpauth,
      `scanned ${scanned}`,
    );
    await accessible(page, 'Two-factor set-up');
    // Its description is the step alone: the key is not read out each time the field takes focus.
    const codeDescription = await page.evaluate(
      "document.getElementById(document.getElementById('totp-code').getAttribute('aria-describedby')).innerText",
    );
    check(
      'the code field is described by its step, not by the key and the link',
      typeof codeDescription === 'string' &&
        codeDescription.includes('6-digit') &&
        !codeDescription.includes(totpKey),
      String(codeDescription),
    );
    await page.getByLabel('Code from your app').fill(totpCode(totpKey));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByText('Two-factor authentication is on').waitFor();

    // API keys: create, use, roll, revoke.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Your new API key' });
    await dialog.waitFor();
    const [apiKey = '', apiSecret = ''] = await dialog.locator('dd code').allInnerTexts();
    await dialog.getByRole('button', { name: 'Copy' }).click();
    const copied = String(await page.evaluate('navigator.clipboard.readText()'));
    check(
      'a new key is shown once in a dialog, and Copy copies it',
      copied.includes(apiKey) && copied.includes(apiSecret) && apiSecret.startsWith('sk_'),
    );
    await accessible(page, 'API keys dialog');
    await dialog.getByRole('button', { name: 'Done' }).click();
    // Create key was disabled while its change was on its way: focus still comes back to it.
    check(
      'closing the new key dialog gives focus back to Create key',
      await focusReaches('BUTTON:Create key'),
    );
    const created = { api_key: apiKey, api_secret: apiSecret };
    check('the new key calls the API: 200', (await statusWith(created)) === 200);

    const rolling = await openRoll(apiKey, 'In 1 hour');
    await rolling.getByRole('button', { name: 'Roll key' }).click();
    const rolledDialog = page.getByRole('dialog', { name: 'Your new API key' });
    await rolledDialog.waitFor();
    const [newKey = '', newSecret = ''] = await rolledDialog.locator('dd code').allInnerTexts();
    await rolledDialog.getByRole('button', { name: 'Done' }).click();
    const rolled = { api_key: newKey, api_secret: newSecret };
    check(
      'after a roll both keys work until the old one expires',
      newKey !== apiKey && (await statusWith(created)) === 200 && (await statusWith(rolled)) === 200,
    );
    // The rolled key's allowlist: editing it says the new key has a list of its own.
    // Opening it reads the list again: a key a colleague rolled since the page read it says so too.
    const listReads = () => seen.requested.filter((url) => /\/api\/v1\/dashboard\/keys\?/.test(url)).length;
    const readsBefore = listReads();
    await rowButton(apiKey, 'Edit IPs').click();
    const oldKeyIps = page.getByRole('dialog', { name: `Allowed IPs of ${apiKey}` });
    const successorSaid = await oldKeyIps
      .getByText('If it was rolled, the new key has an allowlist of its own: edit that one too.')
      .waitFor({ timeout: 5_000 })
      .then(() => true)
      .catch(() => false);
    const fieldDescribed = await oldKeyIps.getByLabel(/Allowed IPs/).getAttribute('aria-describedby');
    await oldKeyIps.getByRole('button', { name: 'Cancel' }).click();
    check(
      "editing a rolled key's allowlist says the new key has its own, read with the field, from the list read again",
      successorSaid && fieldDescribed === 'edit-ips-expiry' && listReads() > readsBefore,
      `said ${successorSaid}, described by ${fieldDescribed}, ${listReads() - readsBefore} list reads`,
    );

    // Revoke asks first: Cancel sends nothing, and the key keeps working.
    const revokes = () => seen.requested.filter((url) => /\/keys\/[^/]+\/revoke$/.test(url)).length;
    await rowButton(apiKey, 'Revoke').click();
    const confirmRevoke = page.getByRole('dialog', { name: `Revoke ${apiKey}` });
    await confirmRevoke.getByRole('button', { name: 'Cancel' }).click();
    await confirmRevoke.waitFor({ state: 'detached', timeout: 5_000 }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    check(
      'Revoke asks first; Cancel revokes nothing',
      revokes() === 0 && (await confirmRevoke.count()) === 0 && (await statusWith(created)) === 200,
      `${revokes()} requests, ${await confirmRevoke.count()} dialog(s)`,
    );
    await rowButton(apiKey, 'Revoke').click();
    // An Enter pressed as the dialog opens cancels: the first focus is on Cancel, not Revoke key.
    check('the Revoke dialog opens with focus on Cancel', await focusReaches('BUTTON:Cancel'));
    await page
      .getByRole('dialog', { name: `Revoke ${apiKey}` })
      .getByRole('button', { name: 'Revoke key' })
      .click();
    const revokedAt = Date.now();
    await page
      .getByRole('row', { name: new RegExp(apiKey) })
      .getByText('revoked')
      .waitFor();
    // The row's Revoke, which focus went back to, is gone with the revoked key's actions.
    check('revoked, focus goes to the page heading, not nowhere', await focusReaches('H1:API keys'));
    const refusedAfter = await until(
      'the revoked key to be refused',
      async () => (await statusWith(created)) === 401 && Date.now() - revokedAt,
      65_000,
    ).catch(() => -1);
    // Locally within the key cache's 5 s (AUTH_CACHE_SECONDS), as the README says, plus the poll's
    // and a request's time on a loaded machine (up to 3 s); the contract's bound, the dashboard's
    // promise, is 60 s, and API Gateway's 35 s on AWS: either would fail this.
    check(
      `the revoked key is refused within 5 s (${(refusedAfter / 1000).toFixed(1)} s)`,
      refusedAfter >= 0 && refusedAfter <= 8_000,
    );
    check('the rolled key still works', (await statusWith(rolled)) === 200);

    // The dashboard's own keys list, with the page's session (its ID token in sessionStorage).
    const dashboardKeys = async () =>
      (await page.evaluate(`(async () => {
        const { id_token } = JSON.parse(sessionStorage.getItem('naira.session') ?? '{}');
        const response = await fetch('/api/v1/dashboard/keys?limit=100', {
          headers: { Authorization: 'Bearer ' + id_token },
        });
        return (await response.json()).data;
      })()`)) as { api_key: string; status: string; expires_at: string | null; allowed_ips: string[] }[];
    const activeKeys = async () => (await dashboardKeys()).filter((key) => key.status === 'active').length;

    // A double click on Create key makes one key, whose secret is the one shown.
    const activeBefore = await activeKeys();
    await page.getByRole('button', { name: 'Create key' }).dblclick();
    const once = page.getByRole('dialog', { name: 'Your new API key' });
    await once.waitFor();
    const [spareKey = ''] = await once.locator('dd code').allInnerTexts();
    await once.getByRole('button', { name: 'Done' }).click();
    const activeAfter = await activeKeys();
    check(
      `a double click on Create key makes one key (${activeAfter - activeBefore})`,
      activeAfter - activeBefore === 1,
    );

    // While a change is on its way (a slow network), no other can be started from the page.
    const slowRevoke = /\/api\/v1\/dashboard\/keys\/[^/]+\/revoke$/;
    await page.route(slowRevoke, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await route.continue();
    });
    await rowButton(spareKey, 'Revoke').click();
    const revoking = page.getByRole('dialog', { name: `Revoke ${spareKey}` });
    await revoking.getByRole('button', { name: 'Revoke key' }).click();
    const rollWhileRevoking = page.getByRole('row', { name: new RegExp(newKey) }).getByRole('button', {
      name: 'Roll',
    });
    check(
      "while a revoke is on its way, the other keys' buttons and the dialog's own are disabled",
      (await rollWhileRevoking.isDisabled()) &&
        (await revoking.getByRole('button', { name: 'Revoke key' }).isDisabled()),
    );
    await revoking.waitFor({ state: 'detached' });
    await page.unroute(slowRevoke);
    await page
      .getByRole('row', { name: new RegExp(spareKey) })
      .getByText('revoked')
      .waitFor();

    // A refused allowlist keeps the dialog open, with what was typed and why it was refused; and
    // the list read again after it (slow here) puts back no dialog's choice: not the typed text,
    // nor a Roll's "Now" chosen meanwhile.
    const keysList = /\/api\/v1\/dashboard\/keys\?/;
    await page.route(keysList, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await route.continue().catch(() => undefined);
    });
    const [failedBefore, errorsBefore] = [seen.failed.length, seen.consoleErrors.length];
    const editing = page.getByRole('dialog', { name: `Allowed IPs of ${newKey}` });
    const refuseAllowlist = async () => {
      await rowButton(newKey, 'Edit IPs').click();
      await editing.getByLabel(/Allowed IPs/).fill('10.0.0.0/33');
      await editing.getByRole('button', { name: 'Save' }).click();
      await editing.getByRole('alert').waitFor();
    };
    await refuseAllowlist();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    check(
      'a refused allowlist keeps the dialog open with the text typed and the reason, after the list is read again',
      (await editing.getByLabel(/Allowed IPs/).inputValue()) === '10.0.0.0/33',
      await editing.getByRole('alert').innerText(),
    );
    const field = editing.getByLabel(/Allowed IPs/);
    const describedBy = (await field.getAttribute('aria-describedby')) ?? '';
    check(
      'the refused field is marked invalid and described by the reason',
      (await field.getAttribute('aria-invalid')) === 'true' &&
        !!describedBy &&
        (await editing.locator(`#${describedBy}`).getAttribute('role')) === 'alert',
    );
    await editing.getByRole('button', { name: 'Cancel' }).click();
    check("Cancel gives focus back to the row's Edit IPs", await focusReaches('BUTTON:Edit IPs'));
    await refuseAllowlist();
    await editing.getByRole('button', { name: 'Cancel' }).click();
    const rollingNow = await openRoll(newKey, 'Now');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    check(
      'a Roll\'s "Now" stays chosen while the list is read again behind the dialog',
      (await rollingNow.getByLabel('Old key expires').inputValue()) === '0',
    );
    await rollingNow.getByRole('button', { name: 'Cancel' }).click();
    await page.unroute(keysList);
    // The refusals asked for: their 400s (and the browser's notes of them) are no failures of the page's.
    const refusals = seen.failed.splice(failedBefore);
    seen.consoleErrors.splice(errorsBefore);
    check(
      'the allowlist was refused by the API (400) twice, nothing else failed meanwhile',
      refusals.length === 2 && refusals.every((refusal) => refusal.startsWith('400 ')),
      refusals.join(', '),
    );
    check(
      'the refused allowlist changed nothing',
      (await dashboardKeys()).find((key) => key.api_key === newKey)?.allowed_ips.length === 0,
    );

    // A colleague (here the same session, from outside the page) saves an allowlist after this page
    // read the list: Edit IPs opens on theirs; one they save while the dialog is open is not
    // overwritten by a Save of what the dialog showed.
    const asColleague = (method: string, route: string, body?: unknown) =>
      page.evaluate(`(async () => {
        const { id_token } = JSON.parse(sessionStorage.getItem('naira.session') ?? '{}');
        const response = await fetch('/api/v1/dashboard${route}', {
          method: '${method}',
          headers: { Authorization: 'Bearer ' + id_token, 'Content-Type': 'application/json' },
          body: ${body === undefined ? 'undefined' : `'${JSON.stringify(body)}'`},
        });
        await response.text();
        return response.status;
      })()`);
    const allowlistOf = async (key: string) =>
      ((await dashboardKeys()).find((candidate) => candidate.api_key === key)?.allowed_ips ?? []).join(',');
    await asColleague('POST', `/keys/${newKey}/allowed-ips`, { allowed_ips: ['203.0.113.0/24'] });
    await rowButton(newKey, 'Edit IPs').click();
    const theirs = page.getByRole('dialog', { name: `Allowed IPs of ${newKey}` });
    await theirs.waitFor();
    check(
      "Edit IPs opens on a colleague's list saved after the page read the list",
      (await theirs.getByLabel(/Allowed IPs/).inputValue()) === '203.0.113.0/24',
      await theirs.getByLabel(/Allowed IPs/).inputValue(),
    );
    await asColleague('POST', `/keys/${newKey}/allowed-ips`, { allowed_ips: ['198.51.100.7/32'] });
    await theirs.getByLabel(/Allowed IPs/).fill('');
    await theirs.getByRole('button', { name: 'Save' }).click();
    await theirs.getByRole('alert').waitFor();
    const conflict = await theirs.getByRole('alert').innerText();
    check(
      'a Save over a list a colleague saved while the dialog was open is refused, naming theirs, which stays',
      conflict.includes('198.51.100.7/32') && (await allowlistOf(newKey)) === '198.51.100.7/32',
      conflict,
    );
    await theirs.getByRole('button', { name: 'Save' }).click();
    await theirs.waitFor({ state: 'detached' });
    check('saved again, knowing theirs, it replaces it', (await allowlistOf(newKey)) === '');

    // A key made after its page was left (a slow answer, and a click on Webhooks meanwhile): its
    // secret is shown on the page now open, never lost.
    const slowCreate = /\/api\/v1\/dashboard\/keys$/;
    await page.route(slowCreate, async (route) => {
      if (route.request().method() === 'POST') await new Promise((resolve) => setTimeout(resolve, 1_500));
      await route.continue();
    });
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    const lateSecret = page.getByRole('dialog', { name: 'Your new API key' });
    const lateShown = await lateSecret
      .waitFor({ timeout: 10_000 })
      .then(() => true)
      .catch(() => false);
    const [lateKey = ''] = lateShown ? await lateSecret.locator('dd code').allInnerTexts() : [];
    check(
      'a key made after its page was left shows its secret on the page now open',
      lateShown &&
        (await page.getByRole('heading', { name: 'Webhooks', level: 1 }).isVisible()) &&
        (await dashboardKeys()).some((key) => key.api_key === lateKey && key.status === 'active'),
      lateKey,
    );
    if (lateShown) await lateSecret.getByRole('button', { name: 'Done' }).click();
    await page.unroute(slowCreate);
    await asColleague('POST', `/keys/${lateKey}/revoke`);

    // The service unreachable: a change says it may or may not have been made, and the list keeps
    // what it showed rather than read "No keys yet."
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('row', { name: new RegExp(newKey) }).waitFor();
    const [failedOffline, errorsOffline] = [seen.failed.length, seen.consoleErrors.length];
    const dashboardApi = /\/api\/v1\/dashboard\//;
    await page.route(dashboardApi, (route) => route.abort('internetdisconnected'));
    await rowButton(newKey, 'Revoke').click();
    const offline = page.getByRole('dialog', { name: `Revoke ${newKey}` });
    await offline.getByRole('button', { name: 'Revoke key' }).click();
    await offline.getByRole('alert').waitFor();
    const offlineSaid = await offline.getByRole('alert').innerText();
    await offline.getByRole('button', { name: 'Cancel' }).click();
    const pageSays = await page.getByRole('alert').first().innerText();
    check(
      'unreachable, a change says it may have been made or not, and the keys stay listed "as last read"',
      offlineSaid.startsWith('Could not reach the service') &&
        offlineSaid.includes('may have been made or not') &&
        pageSays.includes('Shown as last read') &&
        (await page.getByText('No keys yet.').count()) === 0 &&
        (await page.getByRole('row', { name: new RegExp(newKey) }).count()) === 1,
      `${offlineSaid} | ${pageSays}`,
    );
    await page.unroute(dashboardApi);
    // The requests refused on purpose (and the browser's notes of them) are no failures of the page's.
    seen.failed.splice(failedOffline);
    seen.consoleErrors.splice(errorsOffline);

    // A list refused by a rate limit as it is read again (Edit IPs reads it first): the rows stay,
    // "as last read", never "No keys yet."
    const [failedLimited, errorsLimited] = [seen.failed.length, seen.consoleErrors.length];
    const listRead = /\/api\/v1\/dashboard\/keys\?/;
    await page.route(listRead, (route) =>
      route.fulfill({
        status: 429,
        headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '30' },
        body: JSON.stringify({ status: 'error', message: 'Rate limit exceeded', code: 'rate_limited' }),
      }),
    );
    await rowButton(newKey, 'Edit IPs').click();
    await page.getByRole('alert').filter({ hasText: 'Rate limit exceeded' }).waitFor();
    // The list is read again after it (refused too).
    await until('the list read again', async () => seen.failed.length - failedLimited >= 2, 5_000);
    check(
      'a list refused 429 as it is read again keeps its rows, "as last read"',
      (await page.getByText('No keys yet.').count()) === 0 &&
        (await page.getByRole('row', { name: new RegExp(newKey) }).count()) === 1,
    );
    await page.unroute(listRead);
    seen.failed.splice(failedLimited);
    seen.consoleErrors.splice(errorsLimited);

    // A page opened while the API cannot be reached says its lists were not read, once, never that
    // they are empty ("No endpoints yet." for endpoints that exist).
    const [failedUnread, errorsUnread] = [seen.failed.length, seen.consoleErrors.length];
    await page.route(dashboardApi, (route) => route.abort('internetdisconnected'));
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('alert').filter({ hasText: 'Could not reach the service' }).first().waitFor();
    await until('both lists refused', async () => (await page.getByText('Loading…').count()) === 0, 5_000);
    const unreadWebhooks = [
      await page.getByText('Not loaded: see the message above.').count(),
      await page.getByRole('alert').count(),
      await page.getByText(/^No (endpoints|events) yet\.$/).count(),
    ];
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await until('the keys refused', async () => (await page.getByText('Loading…').count()) === 0, 5_000);
    const unreadKeys = [
      await page.getByText('Not loaded: see the message above.').count(),
      await page.getByText('No keys yet.').count(),
    ];
    check(
      'a page opened offline says its lists were not loaded, in one alert, never that they are empty',
      unreadWebhooks.join() === '2,1,0' && unreadKeys.join() === '1,0',
      `webhooks ${unreadWebhooks}, keys ${unreadKeys}`,
    );
    await page.unroute(dashboardApi);
    await page.reload();
    await page.getByRole('row', { name: new RegExp(newKey) }).waitFor();
    seen.failed.splice(failedUnread);
    seen.consoleErrors.splice(errorsUnread);

    // Webhooks: an endpoint on a local receiver, a payment's event with its attempts, Resend.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    // A double click adds one endpoint (one change at a time, and its Idempotency-Key).
    await page.getByRole('button', { name: 'Add endpoint' }).dblclick();
    const secretDialog = page.getByRole('dialog', { name: "Your endpoint's signing secret" });
    await secretDialog.waitFor();
    const [, endpointSecret = ''] = await secretDialog.locator('dd code').allInnerTexts();
    check('the endpoint secret is shown once', endpointSecret.startsWith('whsec_'));
    await secretDialog.getByRole('button', { name: 'Done' }).click();
    const registered = (await (await api('GET', '/webhook-endpoints', demo)).json()) as {
      data: { url: string }[];
    };
    const added = registered.data.filter((endpoint) => endpoint.url === receiver.url).length;
    check(`a double click on Add endpoint adds one endpoint (${added})`, added === 1);
    // A second endpoint where nothing listens: its attempts fail, and the page says why in words.
    const refusing = `http://127.0.0.1:${await freePort()}/hooks`;
    const refusingEndpoint = (await (
      await api('POST', '/webhook-endpoints', demo, { url: refusing })
    ).json()) as { data: { id: string } };

    const opened = (await (await api('POST', '/virtual-accounts', demo, { amount: 250_000 })).json()) as {
      data: { account_number: string; reference: string };
    };
    await run(
      process.execPath,
      [
        '--import',
        'tsx',
        'infra/local/sandbox-cli.ts',
        'pay',
        '--account',
        opened.data.account_number,
        '--amount',
        '250000',
      ],
      {
        cwd: root,
        env: {
          ...process.env,
          SANDBOX_PORT: new URL(printed(output, 'sandbox partner:')).port,
          DYNAMODB_PORT: String(service.ports.dynamodb),
        },
      },
    );
    const delivered = await until('the payment event at the receiver', async () =>
      receiver.received.find((request) => request.body.includes('"payment.received"')),
    );
    const webhookId = String(delivered.headers['webhook-id']);
    // Two transfers, so the export has debits and credits, each with its fee and balance.
    for (const [i, amount] of [10_000, 25_000].entries()) {
      const sent = await api('POST', '/transfers', demo, {
        reference: `browser-${Date.now()}-${i}`,
        amount,
        account_number: toNuban('058', String(123_456_780 + i)),
        bank_code: '058',
        // A comma and quotes: the export must quote the field (RFC 4180).
        narration: `Invoice ${i + 1}, "browser" test`,
      });
      check(`transfer ${i + 1} is sent (201)`, sent.status === 201, await sent.text());
    }
    await page.reload();
    const eventRow = page.getByRole('row', { name: new RegExp(webhookId) });
    // Each row's button named by its event: a screen reader's list of buttons tells them apart.
    await eventRow.getByRole('button', { name: `Show attempts of ${webhookId}`, exact: true }).click();
    // Named by the endpoint's URL, as the endpoints table shows it (not by an id it never shows).
    const attemptsTo = `Delivery attempts to ${receiver.url} (`;
    const attempts = page.getByRole('table', { name: attemptsTo });
    await attempts.first().getByRole('cell', { name: '200', exact: true }).first().waitFor();
    check("a payment's event shows its delivery attempt (200), to its endpoint's URL", true);
    // The panel opens after the whole list: focus comes to its heading.
    check(
      'the attempts panel, opened far below its button, gets focus on its heading',
      !!(await until(
        'focus on the panel',
        async () => (await page.evaluate('document.activeElement?.id')) === 'event-detail',
        3_000,
      ).catch(() => false)),
    );
    const refusedCell = page
      .getByRole('table', { name: `Delivery attempts to ${refusing} (` })
      .getByRole('cell', {
        name: 'Connection refused: nothing takes connections on that port (ECONNREFUSED)',
        exact: true,
      });
    check(
      "a failed attempt's error is said in words, its code kept",
      !!(await until('the refused attempt', async () => {
        if ((await refusedCell.count()) > 0) return true;
        // A look every 2 s: Refresh spends the key's requests per minute.
        await page.getByRole('button', { name: 'Refresh' }).click();
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        return (await refusedCell.count()) > 0;
      }).catch(() => false)),
    );
    await accessible(page, 'Webhooks');
    // Gone before Resend, which then sends to the receiver's endpoint only.
    await api('DELETE', `/webhook-endpoints/${refusingEndpoint.data.id}`, demo);
    await page.getByRole('button', { name: 'Resend' }).click();
    await until(
      'the resent delivery',
      async () =>
        receiver.received.filter((request) => request.headers['webhook-id'] === webhookId).length >= 2,
    );
    await page.getByRole('button', { name: 'Refresh' }).click();
    const shown = await until('the second attempt in the page', async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      const count = await page
        .getByRole('table', { name: attemptsTo })
        .getByRole('cell', { name: '200', exact: true })
        .count();
      return count >= 2 && count;
    }).catch(() => 0);
    check('Resend delivers the same webhook-id again, and the page shows the new attempt', shown >= 2);
    check(
      'the resend is shown apart from the first delivery',
      (await page.getByRole('table', { name: attemptsTo }).count()) >= 2 &&
        (await page.getByRole('table', { name: /\), resend 1$/ }).count()) === 1,
    );

    // Rotate secret asks first (the old secret signs only 24 hours more): Cancel sends nothing.
    const endpointRow = page.getByRole('row', { name: new RegExp(receiver.url) });
    const rotations = () => seen.requested.filter((url) => url.endsWith('/rotate-secret')).length;
    await endpointRow.getByRole('button', { name: 'Rotate secret' }).click();
    const confirmRotate = page.getByRole('dialog', { name: `Rotate the secret of ${receiver.url}` });
    await confirmRotate.waitFor();
    check('the Rotate dialog opens with focus on Cancel', await focusReaches('BUTTON:Cancel'));
    // What it does is read with its title: the dialog is described by its paragraph.
    check(
      'the Rotate dialog is described by what rotation does',
      (await confirmRotate.getAttribute('aria-describedby')) === 'rotate-what' &&
        (await page.locator('#rotate-what').innerText()).startsWith('A new signing secret is made'),
    );
    await confirmRotate.getByRole('button', { name: 'Cancel' }).click();
    await confirmRotate.waitFor({ state: 'detached' });
    check('Rotate secret asks first; Cancel rotates nothing', rotations() === 0, `${rotations()} requests`);
    const rotationKeys: string[] = [];
    const keyOfRotation = (asked: Request) => {
      if (asked.url().endsWith('/rotate-secret')) rotationKeys.push(asked.headers()['idempotency-key'] ?? '');
    };
    page.on('request', keyOfRotation);
    await endpointRow.getByRole('button', { name: 'Rotate secret' }).click();
    await confirmRotate.getByRole('button', { name: 'Rotate secret' }).click();
    await secretDialog.waitFor();
    const [, rotatedSecret = ''] = await secretDialog.locator('dd code').allInnerTexts();
    check(
      'confirmed, the rotation shows a new secret once',
      rotations() === 1 && rotatedSecret.startsWith('whsec_') && rotatedSecret !== endpointSecret,
      `${rotations()} requests`,
    );
    await secretDialog.getByRole('button', { name: 'Done' }).click();
    // The list read again after each change below is answered with the merchant API's (the demo key's
    // limit): the checks at the end spend the dashboard user's 100 requests a minute to the last.
    const endpointsList = /\/api\/v1\/dashboard\/webhook-endpoints\?/;
    const listFromApi = async (route: Route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: await (await api('GET', '/webhook-endpoints?limit=100', demo)).text(),
      });
    /** The API's answer to a change, made up in the browser (the API's own replays are the idempotency tests'). */
    const answered =
      (status: number, data: unknown, replayed = false) =>
      (route: Route) =>
        route.fulfill({
          status,
          contentType: 'application/json',
          headers: replayed ? { 'Idempotent-Replayed': 'true' } : {},
          body: JSON.stringify({ status: true, message: 'Done', data }),
        });
    const madeUp = (url: string, secret: string) => ({
      id: 'we_made_up',
      url,
      description: null,
      events: [],
      secret,
      created_at: new Date().toISOString(),
    });

    // Asked for again later, on purpose (after a leak), a rotation is a new one: the Idempotency-Key
    // of the first was forgotten once it was made (sent again, the API would replay its secret).
    await secretDialog.waitFor({ state: 'detached' });
    const rotateRoute = /\/rotate-secret$/;
    await page.route(rotateRoute, answered(200, madeUp(receiver.url, 'whsec_YWdhaW4=')));
    await page.route(endpointsList, listFromApi);
    await endpointRow.getByRole('button', { name: 'Rotate secret' }).click();
    await confirmRotate.getByRole('button', { name: 'Rotate secret' }).click();
    await secretDialog.waitFor();
    await secretDialog.getByRole('button', { name: 'Done' }).click();
    await page.unroute(rotateRoute);
    page.off('request', keyOfRotation);
    check(
      'rotated again later, a new rotation is asked (a new Idempotency-Key), not the first one replayed',
      rotationKeys.length === 2 && !!rotationKeys[0] && rotationKeys[0] !== rotationKeys[1],
      rotationKeys.join(' '),
    );

    // An Add whose answer was lost, asked again, is the same change: the same Idempotency-Key, and
    // its secret said to be the earlier Add's answer.
    const [failedLost, errorsLost] = [seen.failed.length, seen.consoleErrors.length];
    const lostUrl = `${receiver.url}/lost-answer`;
    const addRoute = /\/api\/v1\/dashboard\/webhook-endpoints$/;
    const addKeys: string[] = [];
    const madeLost = answered(201, madeUp(lostUrl, 'whsec_bG9zdA=='), true);
    await page.route(addRoute, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      addKeys.push(route.request().headers()['idempotency-key'] ?? '');
      return addKeys.length === 1 ? route.abort('internetdisconnected') : madeLost(route);
    });
    await page.getByLabel('Endpoint URL').fill(lostUrl);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('alert').filter({ hasText: 'may have been made or not' }).waitFor();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await secretDialog.waitFor();
    const replayedSaid = await secretDialog
      .getByText('Your earlier Add of this endpoint had been made')
      .count();
    await secretDialog.getByRole('button', { name: 'Done' }).click();
    await page.unroute(addRoute);
    await page.unroute(endpointsList);
    check(
      'an Add whose answer was lost, asked again, sends the same Idempotency-Key',
      addKeys.length === 2 && !!addKeys[0] && addKeys[0] === addKeys[1] && replayedSaid === 1,
      `keys ${addKeys.join(' ')}; replay said ${replayedSaid}`,
    );
    seen.failed.splice(failedLost);
    seen.consoleErrors.splice(errorsLost);

    // Delete asks first; deleted, the event has nowhere to be resent, and the page says so.
    await endpointRow.getByRole('button', { name: 'Delete' }).click();
    const confirmDelete = page.getByRole('dialog', { name: `Delete the endpoint ${receiver.url}` });
    await confirmDelete.getByRole('button', { name: 'Cancel' }).click();
    const stillThere = (await (await api('GET', '/webhook-endpoints', demo)).json()) as {
      data: { url: string }[];
    };
    check(
      'Delete asks first; Cancel keeps the endpoint',
      stillThere.data.some((endpoint) => endpoint.url === receiver.url),
    );
    await endpointRow.getByRole('button', { name: 'Delete' }).click();
    await confirmDelete.getByRole('button', { name: 'Delete endpoint' }).click();
    await endpointRow.waitFor({ state: 'detached' });
    // Said, and focus not left nowhere: the button that opened the dialog went with its row.
    check(
      'deleted, the page says so, and focus goes to the page heading, not nowhere',
      (await page
        .getByRole('status')
        .filter({ hasText: `Deleted the endpoint ${receiver.url}:` })
        .count()) === 1 && (await focusReaches('H1:Webhooks')),
    );
    await page.getByRole('button', { name: 'Resend' }).click();
    await page
      .getByText('Nothing resent: no endpoint now takes this event type (none subscribed to it, or deleted).')
      .waitFor();
    check('with the endpoint deleted, Resend says nothing was resent', true);

    // Transactions: Export CSV, compared with GET /transactions.
    await page.getByRole('link', { name: 'Transactions' }).click();
    await page.getByRole('table', { name: 'Transactions, newest first' }).getByRole('row').nth(1).waitFor();
    await accessible(page, 'Transactions');
    const exportPage = /\/api\/v1\/dashboard\/transactions\?limit=100$/;
    // Cancel gives an export up at once, also while it waits out the rate limit (here 60 s).
    await page.route(exportPage, (route) =>
      route.fulfill({
        status: 429,
        contentType: 'application/json',
        headers: { 'Retry-After': '60' },
        body: JSON.stringify({ status: 'error', code: 'rate_limited', message: 'Rate limit exceeded' }),
      }),
    );
    const [failedBeforeCancel, errorsBeforeCancel] = [seen.failed.length, seen.consoleErrors.length];
    let cancelledDownloads = 0;
    const countDownload = () => void cancelledDownloads++;
    page.on('download', countDownload);
    await page.getByRole('button', { name: 'Export CSV' }).click();
    await page.getByText(/the rate limit lets it go on in 60 s/).waitFor();
    await page.getByRole('button', { name: 'Cancel export' }).click();
    const cancelledSaid = await page
      .getByText('Export cancelled after 0 transactions: nothing was saved.')
      .waitFor({ timeout: 5_000 })
      .then(() => true)
      .catch(() => false);
    await page.unroute(exportPage);
    check(
      'Cancel export stops an export waiting out the rate limit at once, saving nothing, and focus goes back to Export CSV',
      cancelledSaid &&
        cancelledDownloads === 0 &&
        (await page.getByRole('button', { name: 'Cancel export' }).count()) === 0 &&
        (await focusReaches('BUTTON:Export CSV')),
      `said ${cancelledSaid}, ${cancelledDownloads} downloads`,
    );
    page.off('download', countDownload);
    seen.failed.splice(failedBeforeCancel);
    seen.consoleErrors.splice(errorsBeforeCancel);
    // The export's first request is refused by the rate limit (answered so on the way, once): it
    // waits as Retry-After says and goes on, rather than fail.
    let limited = 0;
    await page.route(exportPage, async (route) => {
      if (limited++ > 0) return route.continue();
      await route.fulfill({
        status: 429,
        contentType: 'application/json',
        headers: { 'Retry-After': '1' },
        body: JSON.stringify({ status: 'error', code: 'rate_limited', message: 'Rate limit exceeded' }),
      });
    });
    const [failedBeforeExport, errorsBeforeExport] = [seen.failed.length, seen.consoleErrors.length];
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    await page.unroute(exportPage);
    const limitedExport = seen.failed.splice(failedBeforeExport);
    seen.consoleErrors.splice(errorsBeforeExport);
    check(
      'an export refused by the rate limit waits and goes on (one 429, then the download)',
      limited === 2 && limitedExport.length === 1 && limitedExport[0]?.startsWith('429 ') === true,
      `${limited} requests, refused: ${limitedExport.join(', ')}`,
    );
    const [header = [], ...records] = parseCsv(readFileSync((await download.path()) ?? '', 'utf8'));
    const rows = records.map((record) => Object.fromEntries(record.map((value, i) => [header[i], value])));
    const listed: Record<string, unknown>[] = [];
    let cursor: string | null = null;
    do {
      const response = await api(
        'GET',
        `/transactions?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        demo,
      );
      const page = (await response.json()) as {
        data: Record<string, unknown>[];
        meta: { next_cursor: string | null };
      };
      listed.push(...page.data);
      cursor = page.meta.next_cursor;
    } while (cursor);
    const same =
      rows.length === listed.length &&
      listed.length > 0 &&
      listed.every(
        (item, i) =>
          [
            'reference',
            'type',
            'status',
            'amount',
            'fee',
            'currency',
            'balance_after',
            'created_at',
            'narration',
          ].every((field) => String(item[field] ?? '') === rows[i]?.[field]) &&
          (item.counterparty as { account_name: string }).account_name === rows[i]?.counterparty_account_name,
      );
    check(
      `the CSV export has the rows of GET /transactions (${rows.length})`,
      same,
      `${rows.length} rows vs ${listed.length}`,
    );

    // An export follows the cursor to the last page: a second page (answered so here) is in the file.
    const exportPages = /\/api\/v1\/dashboard\/transactions\?limit=100(&cursor=[^&]*)?$/;
    await page.route(exportPages, (route) => {
      const cursor = new URL(route.request().url()).searchParams.get('cursor');
      const row = { ...listed[0], reference: cursor ? 'EXPORT-PAGE-TWO' : 'EXPORT-PAGE-ONE' };
      return route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ data: [row], meta: { next_cursor: cursor ? null : 'page-two' } }),
      });
    });
    const [twoPages] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    await page.unroute(exportPages);
    const exported = parseCsv(readFileSync((await twoPages.path()) ?? '', 'utf8'))
      .slice(1)
      .map(([reference]) => reference);
    check(
      'an export follows the cursor to the last page',
      exported.join() === 'EXPORT-PAGE-ONE,EXPORT-PAGE-TWO',
      exported.join(),
    );

    // A slow answer to an earlier filter (credits) arriving after the later one's (debits) is dropped.
    const slowCredits = /\/api\/v1\/dashboard\/transactions\?.*type=credit/;
    await page.route(slowCredits, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await route.continue().catch(() => undefined);
    });
    await page.getByLabel('Type').selectOption('credit');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByLabel('Type').selectOption('debit');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const filtered = page.getByRole('table', { name: 'Transactions, newest first' });
    await filtered.getByText('debit (transfer)').first().waitFor();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    check(
      'a late answer to an earlier filter does not replace the current one',
      (await filtered.getByText(/^credit \(/).count()) === 0 &&
        (await filtered.getByText('debit (transfer)').count()) > 0,
    );
    await page.unroute(slowCredits);
    await page.getByLabel('Type').selectOption('');
    await page.getByRole('button', { name: 'Apply filters' }).click();

    // From and To are Lagos days: 26 November starts at 23:00 UTC the day before.
    await page.getByLabel('From').fill('2026-11-26');
    await page.getByLabel('To').fill('2026-11-26');
    const [byDay] = await Promise.all([
      page.waitForRequest(/\/api\/v1\/dashboard\/transactions\?.*from=/),
      page.getByRole('button', { name: 'Apply filters' }).click(),
    ]);
    const asked = new URL(byDay.url()).searchParams;
    check(
      "the From and To days are the browser's (Lagos) days, sent as their UTC times",
      asked.get('from') === '2026-11-25T23:00:00.000Z' && asked.get('to') === '2026-11-26T22:59:59.999Z',
      byDay.url(),
    );
    await page.getByLabel('From').fill('');
    await page.getByLabel('To').fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();

    // on (the API may stop a filtered page short, with a cursor: answered so here, on the way).
    const filterBy = async (status: string) => {
      await page.getByLabel('Status').selectOption(status);
      await page.getByRole('button', { name: 'Apply filters' }).click();
    };
    const transactions = page.getByRole('table', { name: 'Transactions, newest first' });
    await filterBy('reversed');
    await transactions.getByText('No transactions match.').waitFor();
    check('a filter nothing matches says "No transactions match."', true);
    const shortPage = /\/api\/v1\/dashboard\/transactions\?.*status=failed/;
    await page.route(shortPage, (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ data: [], meta: { next_cursor: 'eyJnb2VzIjoib24ifQ' } }),
      }),
    );
    await filterBy('failed');
    await transactions.getByText('Nothing on this page: the list goes on, on the next page.').waitFor();
    check(
      'an empty page with a next cursor says the list goes on, with Next enabled',
      await page.getByRole('button', { name: 'Next page' }).isEnabled(),
    );
    await page.unroute(shortPage);
    await filterBy('');

    // Next page and Previous page walk the pages in order: each once, none skipped, back the way they came.
    const pagesOf = /\/api\/v1\/dashboard\/transactions\?.*limit=20/;
    await page.route(
      pagesOf,
      pagedBy(
        {
          '': ['PAGE-ONE', 'cursor-2'],
          'cursor-2': ['PAGE-TWO', 'cursor-3'],
          'cursor-3': ['PAGE-THREE', null],
        },
        (reference) => ({
          reference,
          type: 'credit',
          category: 'payment',
          amount: 100,
          fee: 0,
          currency: 'NGN',
          status: 'success',
          narration: '',
          counterparty: { account_name: 'Paging', account_number: '0000000000', bank_code: '000' },
          balance_after: 100,
          reason: null,
          virtual_account_reference: null,
          created_at: '2026-11-26T10:00:00.000Z',
          updated_at: '2026-11-26T10:00:00.000Z',
        }),
      ),
    );
    const pages = pagerWalk(page, transactions);
    await filterBy('success');
    await pages.reaches('PAGE-ONE');
    for (const [button, reference] of [
      ['Next page', 'PAGE-TWO'],
      ['Next page', 'PAGE-THREE'],
      ['Previous page', 'PAGE-TWO'],
      ['Previous page', 'PAGE-ONE'],
    ] as const) {
      if (reference === 'PAGE-TWO' && button === 'Previous page') await pages.note('next', 'Next page');
      await pages.press(button);
      await pages.reaches(reference);
    }
    check(
      'Next page and Previous page walk the pages in order, none skipped or repeated',
      pages.steps.join('|') === 'PAGE-ONE|PAGE-TWO|PAGE-THREE|next off|PAGE-TWO|PAGE-ONE' &&
        (await page.getByRole('button', { name: 'Previous page' }).isDisabled()),
      pages.steps.join('|'),
    );
    await page.unroute(pagesOf);
    await filterBy('');

    // The events list's "Older events" and "Newest" (answered here: no request of the user's 100 spent).
    const eventsOf = /\/api\/v1\/dashboard\/events\?.*limit=20/;
    const endpointsOnly = /\/api\/v1\/dashboard\/webhook-endpoints(\?|$)/;
    await page.route(endpointsOnly, (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ status: true, message: 'ok', data: [], meta: { next_cursor: null } }),
      }),
    );
    await page.route(
      eventsOf,
      pagedBy({ '': ['evt_page_one', 'events-2'], 'events-2': ['evt_page_two', null] }, (id) => ({
        id,
        type: 'payment.received',
        created_at: '2026-11-26T10:00:00.000Z',
        data: {},
      })),
    );
    const events = pagerWalk(page, page.getByRole('table', { name: 'Events, newest first' }));
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await events.reaches('evt_page_one');
    await events.note('newest', 'Newest');
    await events.press('Older events');
    await events.reaches('evt_page_two');
    await events.note('older', 'Older events');
    await events.press('Newest');
    await events.reaches('evt_page_one');
    check(
      'Older events shows the next page of events, and Newest the first again',
      events.steps.join('|') === 'evt_page_one|newest off|evt_page_two|older off|evt_page_one',
      events.steps.join('|'),
    );
    await page.unroute(eventsOf);
    await page.unroute(endpointsOnly);

    await page.getByRole('link', { name: 'Payments' }).click();
    const account = page.getByRole('row', { name: new RegExp(opened.data.reference) });
    await account
      .getByRole('button', { name: `Show payments into ${opened.data.reference}`, exact: true })
      .click();
    await page
      .getByRole('table', { name: `Each payment into ${opened.data.reference}` })
      .getByText('₦2,500.00')
      .waitFor();
    check('the Payments page shows a virtual account and its payment', true);
    await accessible(page, 'Payments');

    // At 1280 px the Overview's table fits its box: no tab stop, no region of its own.
    await page.getByRole('link', { name: 'Overview' }).click();
    await until('Overview loaded', async () => (await page.getByText('Loading…').count()) === 0);
    // Measured after two frames: the box's size is observed a frame after it is laid out.
    const regionsAfterFrames = async (selector: string) =>
      Number(
        await page.evaluate(
          `new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(document.querySelectorAll('${selector}').length))))`,
        ),
      );
    const fittingRegions = await regionsAfterFrames('.table-wrap[tabindex]');
    // 320 px wide (a phone, or a laptop at 400%): no page scrolls sideways as a whole (WCAG 1.4.10);
    // a wide table scrolls in its own box.
    await page.setViewportSize({ width: 320, height: 800 });
    const overflowing: string[] = [];
    const unannounced: string[] = [];
    let scrollingRegions = 0;
    for (const name of ['API keys', 'Webhooks', 'Transactions', 'Payments', 'Overview']) {
      await page.getByRole('link', { name }).click();
      await page.getByRole('heading', { name, level: 1 }).waitFor();
      // The page chosen is announced: focus moves to its heading.
      if (!(await focusReaches(`H1:${name}`))) unannounced.push(name);
      // Loaded, each list (leaving a page while it loads would cut its request).
      await until(`${name} loaded`, async () => (await page.getByText('Loading…').count()) === 0);
      const width = Number(await page.evaluate('document.documentElement.scrollWidth'));
      if (width > 320) overflowing.push(`${name} ${width} px`);
      // The keys table scrolls here, in its own box: a named region a keyboard can reach.
      if (name === 'API keys')
        scrollingRegions = await regionsAfterFrames('.table-wrap[tabindex="0"][aria-label]');
    }
    check('at 320 px no page is wider than the window', overflowing.length === 0, overflowing.join(', '));
    check(
      "a table's box takes focus only while it scrolls (none at 1280 px on Overview, the keys table's at 320 px)",
      fittingRegions === 0 && scrollingRegions >= 1,
      `${fittingRegions} at 1280 px, ${scrollingRegions} at 320 px`,
    );
    // The keyboard's first stop skips the header and the navigation to the page's heading.
    await page.reload();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    // Reached first, and seen: on the page when it has focus.
    const skipFirst =
      (await focusReaches('BUTTON:Skip to the page')) &&
      ((await page.getByRole('button', { name: 'Skip to the page' }).boundingBox())?.y ?? -1) >= 0;
    await page.keyboard.press('Enter');
    check(
      'the first Tab reaches "Skip to the page", which moves focus to the heading',
      skipFirst && (await focusReaches('H1:Overview')),
    );
    check(
      'a page chosen in the navigation gets focus on its heading',
      unannounced.length === 0,
      unannounced.join(', '),
    );
    await page.setViewportSize({ width: 1280, height: 900 });

    // A browser clock ten minutes slow (the API allows a minute): "Now" is still the API's now,
    // read from its Date header, so the roll is accepted and the old key expires at once.
    await page.clock.install({ time: Date.now() - 10 * 60_000 });
    await page.reload();
    await page.getByRole('link', { name: 'API keys' }).click();
    const rollNow = await openRoll(newKey, 'Now');
    await rollNow.getByRole('button', { name: 'Roll key' }).click();
    const rolledNow = page.getByRole('dialog', { name: 'Your new API key' });
    await rolledNow.or(page.getByRole('alert')).first().waitFor();
    const accepted = await rolledNow.isVisible();
    if (accepted) await rolledNow.getByRole('button', { name: 'Done' }).click();
    const keys = await dashboardKeys();
    const expiresAt = Date.parse(keys.find((key) => key.api_key === newKey)?.expires_at ?? '');
    check(
      'with the browser clock 10 minutes slow, a roll with "Now" is accepted and ends the old key now',
      accepted && Math.abs(expiresAt - Date.now()) < 15_000,
      `accepted ${accepted}, old key expires ${Number.isFinite(expiresAt) ? new Date(expiresAt).toISOString() : 'never'}`,
    );

    check(
      'every navigation link is there',
      (await page.getByRole('navigation').getByRole('link').allInnerTexts()).join('|') ===
        'Overview|API keys|Webhooks|Transactions|Payments',
    );
    check('no request failed', seen.failed.length === 0, seen.failed.join(', '));
    check('the browser logged no error', seen.consoleErrors.length === 0, seen.consoleErrors.join(' | '));
    check('no request left this machine', seen.outside().length === 0, seen.outside().join(', '));

    // The session's token expires (an hour; the browser's clock moved on): the sign-in form comes back.
    await page.clock.fastForward('01:15:00');
    await page.getByLabel('Email').waitFor();
    check(
      'when the session expires, the dashboard asks to sign in again',
      (await page.getByRole('button', { name: 'Sign in' }).isVisible()) &&
        (await page.evaluate("sessionStorage.getItem('naira.session')")) === null,
    );
    // Said, not just shown: a status line, read with the email field, which takes focus.
    check(
      'and says why, with focus on the email field described by it',
      (await page.getByRole('status').innerText()) === 'Your session ended after an hour: sign in again.' &&
        (await page.getByLabel('Email').getAttribute('aria-describedby')) === 'sign-in-notice' &&
        (await until(
          'focus on the email field',
          async () => (await page.evaluate('document.activeElement?.id')) === 'email',
          3_000,
        ).catch(() => false)),
    );

    // With two-factor on, sign-in asks for the app's code after the password.
    const withCode = await (await browser.newContext()).newPage();
    await withCode.goto(dashboardUrl);
    await withCode.getByLabel('Email').fill(email);
    await withCode.getByLabel('Password').fill(password);
    await withCode.getByRole('button', { name: 'Sign in' }).click();
    // A wrong code: said as such, and the sign-in starts again with the email kept.
    const wrongCode = String((Number(totpCode(totpKey)) + 500_000) % 1_000_000).padStart(6, '0');
    await withCode.getByLabel('Code').fill(wrongCode);
    await withCode.getByRole('button', { name: 'Verify' }).click();
    const codeRefused = withCode.getByRole('alert');
    await codeRefused.waitFor();
    const refusedSaid = await codeRefused.innerText();
    check(
      'a wrong code says the code was not accepted, and signing in again keeps the email, focused',
      refusedSaid.startsWith('The code was not accepted') &&
        (await withCode.getByLabel('Email').inputValue()) === email &&
        (await withCode.evaluate('document.activeElement?.id')) === 'email',
      refusedSaid,
    );
    await withCode.getByLabel('Password').fill(password);
    await withCode.getByRole('button', { name: 'Sign in' }).click();
    await withCode.getByLabel('Code').fill(totpCode(totpKey));
    await withCode.getByRole('button', { name: 'Verify' }).click();
    check(
      'with two-factor on, sign-in asks for the code, and the code signs in',
      await withCode
        .getByRole('heading', { name: 'Overview', level: 1 })
        .waitFor()
        .then(() => true)
        .catch(() => false),
    );
    // Signed in: the page is announced (focus on its heading), and it knows two-factor is on.
    check(
      'signed in, focus is on the page heading, and the page says two-factor is on, offering no set-up',
      !!(await until(
        'focus on the heading',
        async () =>
          (await withCode.evaluate(
            "document.activeElement?.tagName + ':' + document.activeElement?.textContent",
          )) === 'H1:Overview',
        3_000,
      ).catch(() => false)) &&
        (await withCode
          .getByText('Two-factor authentication is on: every sign-in asks for a code')
          .count()) === 1 &&
        (await withCode.getByRole('button', { name: 'Set up two-factor authentication' }).count()) === 0,
    );

    // A tab opened from this one holds a copy of its session: Sign out in one signs out the other.
    // Signed out while a key it asked for is on its way, the key's answer shows no secret: the
    // session that asked has ended (and a shared computer's next user must not see it).
    const [twin] = await Promise.all([
      withCode.context().waitForEvent('page'),
      withCode.evaluate('window.open(location.href)'),
    ]);
    await twin.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await twin.getByRole('link', { name: 'API keys' }).click();
    await twin.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await twin.route(/\/api\/v1\/dashboard\/keys$/, async (route) => {
      if (route.request().method() === 'POST') await new Promise((resolve) => setTimeout(resolve, 1_500));
      await route.continue();
    });
    const madeLate = twin.waitForResponse(
      (answer) => /\/api\/v1\/dashboard\/keys$/.test(answer.url()) && answer.request().method() === 'POST',
    );
    await twin.getByRole('button', { name: 'Create key' }).click();
    await twin.getByRole('button', { name: 'Sign out' }).click();
    // What the page asks for once signed out: the list read again after the change is not sent.
    const askedSignedOut: string[] = [];
    twin.on('request', (asked) => {
      if (/\/api\/v1\/dashboard\/keys\?/.test(asked.url())) askedSignedOut.push(asked.url());
    });
    const signedOutAnswer = await madeLate;
    await new Promise((resolve) => setTimeout(resolve, 500));
    check(
      'a key answered after Sign out shows no secret on the sign-in form, and the page asks for nothing more',
      signedOutAnswer.status() === 201 &&
        (await twin.getByLabel('Email').isVisible()) &&
        (await twin.getByRole('dialog').count()) === 0 &&
        askedSignedOut.length === 0,
      `${signedOutAnswer.status()}, ${await twin.getByRole('dialog').count()} dialog(s), asked ${askedSignedOut.join(', ')}`,
    );
    check(
      'Sign out in a tab signs out the tab it was opened from, saying why',
      await withCode
        .getByText('You signed out in another tab: sign in again.')
        .waitFor({ timeout: 5_000 })
        .then(async () => (await withCode.evaluate("sessionStorage.getItem('naira.session')")) === null)
        .catch(() => false),
    );

    // Last, as it spends this address's limit: sign-in shares the count of failed key attempts,
    // and its page says when to try again.
    // The window rolls: when earlier failed attempts filled it, the 429 comes soon and they leave it
    // seconds later, letting the sign-in through. Spent again until the wait is long, all recent;
    // never waited out after the last spending (the sign-in would then find room).
    for (let round = 0; ; round++) {
      let wait = 0;
      for (let i = 0; i < 110 && wait === 0; i++) {
        const refused = await api('GET', '/balance', { 'X-API-Key': 'pk_invented', 'X-API-Secret': 'x' });
        if (refused.status === 429) wait = Number(refused.headers.get('retry-after') ?? 60);
      }
      if (wait >= 30 || round === 7) break;
      await new Promise((resolve) => setTimeout(resolve, (wait + 1) * 1000));
    }
    const later = await (await browser.newContext()).newPage();
    await later.goto(dashboardUrl);
    await later.getByLabel('Email').fill(email);
    await later.getByLabel('Password').fill(password);
    await later.getByRole('button', { name: 'Sign in' }).click();
    const alert = later.getByRole('alert');
    await alert.waitFor();
    const said = await alert.innerText();
    check(
      "with the address's limit spent, sign-in says when to try again",
      /Rate limit exceeded: try again in \d+ s/.test(said),
      said,
    );
    console.log(`screenshots: ${path.relative(root, shots)}/`);
  } finally {
    await browser.close();
    await receiver.close();
    await stopChecked(service, check);
  }
  return summary();
}

runBrowserTest(main);
