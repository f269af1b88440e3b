import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP } from '#infra/dashboard/build.ts';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { startTestGateway } from '#test/support/gateway.ts';

/** The web app as the local runtime serves it (API.md §10: locally at /dashboard). */
describe('the dashboard web app, served locally', () => {
  let gateway: LocalGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());
  const get = (path: string) => fetch(`${gateway.url}${path}`, { redirect: 'manual' });
  const expectSecured = (response: Response) => {
    expect(response.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  };

  it('sends /dashboard to /dashboard/, so its relative asset URLs resolve', async () => {
    const response = await get('/dashboard');
    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe('/dashboard/');
    expectSecured(response);
  });

  it('serves the page, its one script and its styles with a strict CSP and security headers', async () => {
    const page = await get('/dashboard/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toContain("script-src 'self'");
    expect(DASHBOARD_CSP).not.toContain('unsafe');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).toContain('src="app.js"');
    // Nothing inline, nothing from another origin.
    expect(html).not.toMatch(/<script>|style=|https?:\/\//);
    const script = await get('/dashboard/app.js');
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const bundle = await script.text();
    expect(bundle).toContain('/api/v1/dashboard');
    // Small: Preact and the pages, no framework that outweighs the API it drives.
    expect(bundle.length).toBeLessThan(80_000);
    expect((await get('/dashboard/app.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
    // The bundle names its licence notices, served beside it.
    expect(bundle.startsWith('/*! Third-party licences: licenses.txt */')).toBe(true);
    const licences = await get('/dashboard/licenses.txt');
    expect(licences.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await licences.text()).toMatch(/^preact \d+\.\d+\.\d+ \(MIT\)$/m);
  });

  it("keeps every CSP directive to the site's own origin (the served header is this constant, locally and on CloudFront)", () => {
    const directives = Object.fromEntries(
      DASHBOARD_CSP.split(/;\s*/).map((directive) => {
        const [name = '', ...sources] = directive.split(' ');
        return [name, sources.join(' ')];
      }),
    );
    expect(directives).toEqual({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'img-src': "'self' data:",
      'connect-src': "'self'",
      'base-uri': "'none'",
      'form-action': "'none'",
      'frame-ancestors': "'none'",
    });
  });

  it('answers HEAD as GET without the body, as CloudFront does', async () => {
    const head = await fetch(`${gateway.url}/dashboard/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(head.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(await head.text()).toBe('');
  });

  it("gives the dashboard's API answers the site's security headers, as CloudFront does on AWS, and not the merchant API's", async () => {
    const refused = await fetch(`${gateway.url}/api/v1/dashboard/keys`);
    expect(refused.status).toBe(401);
    expectSecured(refused);
    const signIn = await fetch(`${gateway.url}/api/v1/dashboard/sessions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'nobody@example.ng', password: 'not-the-password' }),
    });
    expect(signIn.status).toBe(401);
    expectSecured(signIn);
    expect(signIn.headers.get('referrer-policy')).toBe('no-referrer');
    expect(signIn.headers.get('strict-transport-security')).toMatch(/^max-age=31536000/);
    const merchantApi = await fetch(`${gateway.url}/api/v1/developer/balance`);
    expect(merchantApi.status).toBe(401);
    expect(merchantApi.headers.get('content-security-policy')).toBeNull();
  });

  it('answers a file it does not have with the 404 envelope', async () => {
    const missing = await get('/dashboard/secrets.json');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ status: 'error', code: 'route_not_found' });
    // Its CSP and security headers too, as CloudFront's response-headers policy adds them to every answer.
    expectSecured(missing);
  });
});
