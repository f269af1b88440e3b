import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type AddressClass,
  checkUrlShape,
  checkWebhookUrl,
  classifyAddress,
  postPinned,
  type Resolver,
  type UrlCheck,
} from '#shared/merchant-webhooks/url-guard.ts';

const STRICT = { allowPrivate: false };
const LOCAL = { allowPrivate: true };

/** A resolver that knows a few names, and for any other answers as DNS does for an unknown name. */
const fakeDns: Record<string, string[]> = {
  'good.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'evil.example': ['169.254.169.254'],
  'evil6.example': ['::ffff:a9fe:a9fe'],
  'rebind.example': ['93.184.216.34', '10.0.0.1'],
  'mixed-local.example': ['127.0.0.1', '169.254.169.254'],
  'cgnat.example': ['100.64.1.1'],
  localhost: ['127.0.0.1', '::1'],
  'app.localhost': ['127.0.0.1'],
  'metadata.google.internal': ['169.254.169.254'],
  'svc.internal': ['10.0.0.5'],
  'empty.example': [],
};
const resolve: Resolver = async (hostname) => {
  const found = fakeDns[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
};

async function verdict(url: string, allowPrivate: boolean): Promise<UrlCheck> {
  return checkWebhookUrl(url, { allowPrivate, resolve });
}

describe('checkUrlShape', () => {
  it('accepts an https URL and returns it parsed', () => {
    const result = checkUrlShape('https://hooks.example.com/naira?x=1', STRICT);
    expect(result).toMatchObject({ ok: true });
    expect(result.ok && result.url.href).toBe('https://hooks.example.com/naira?x=1');
  });

  it('refuses http:// unless private addresses are allowed', () => {
    expect(checkUrlShape('http://hooks.example.com/', STRICT)).toEqual({
      ok: false,
      reason: 'url must use https',
    });
    expect(checkUrlShape('http://hooks.example.com/', LOCAL)).toMatchObject({ ok: true });
  });

  it.each([
    'ftp://hooks.example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'gopher://hooks.example.com/',
    'ws://hooks.example.com/',
  ])('refuses the scheme of %s, even when private addresses are allowed', (url) => {
    expect(checkUrlShape(url, LOCAL)).toEqual({ ok: false, reason: 'url must use https' });
  });

  it.each(['https://user:pw@x.example/hook', 'https://user@x.example/hook', 'https://:pw@x.example/hook'])(
    'refuses user info in %s',
    (url) => {
      expect(checkUrlShape(url, LOCAL)).toEqual({ ok: false, reason: 'url must not contain user info' });
    },
  );

  it.each(['https://x.example/hook#part', 'https://x.example/hook#'])('refuses a fragment in %s', (url) => {
    expect(checkUrlShape(url, STRICT)).toEqual({ ok: false, reason: 'url must not contain a fragment' });
  });

  it.each(['https://8.8.8.8:0/x', 'https://x.example:00/hook'])('refuses port 0 in %s', (url) => {
    expect(checkUrlShape(url, STRICT)).toEqual({ ok: false, reason: 'url must not use port 0' });
    // Any other port is the merchant's choice.
    expect(checkUrlShape(url.replace(/:0+\//, ':8443/'), STRICT).ok).toBe(true);
  });

  it.each(['not a url', '/relative/hook', '', 'https://', 'https://exa mple.com/'])(
    'refuses %j as not a URL',
    (url) => {
      expect(checkUrlShape(url, STRICT)).toEqual({ ok: false, reason: 'url is not a valid absolute URL' });
    },
  );

  it('accepts 2048 characters and refuses 2049', () => {
    const base = 'https://x.example/';
    expect(checkUrlShape(`${base}${'a'.repeat(2048 - base.length)}`, STRICT)).toMatchObject({ ok: true });
    expect(checkUrlShape(`${base}${'a'.repeat(2049 - base.length)}`, STRICT)).toEqual({
      ok: false,
      reason: 'url is longer than 2048 characters',
    });
  });

  it('refuses a URL that parsing lengthens beyond 2048 characters', () => {
    // 500 characters in, 3000 out: each é becomes %C3%A9 in the parsed URL.
    expect(checkUrlShape(`https://x.example/${'é'.repeat(500)}`, STRICT)).toEqual({
      ok: false,
      reason: 'url is longer than 2048 characters',
    });
  });
});

describe('classifyAddress', () => {
  it.each<[string, AddressClass]>([
    ['93.184.216.34', 'public'],
    ['8.8.8.8', 'public'],
    ['2606:2800:220:1:248:1893:25c8:1946', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['169.254.0.1', 'link_local'],
    ['169.254.170.3', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.1', 'reserved'],
    ['203.0.113.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['64:ff9b:1::a9fe:a9fe', 'reserved'],
    ['4000::1', 'reserved'],
    ['not-an-address', 'reserved'],
    ['', 'reserved'],
  ])('classifies %s as %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each<[string, AddressClass]>([
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['[::ffff:a9fe:a9fe]', 'metadata'],
    ['::ffff:0:a9fe:a9fe', 'metadata'],
    ['::a9fe:a9fe', 'metadata'],
    ['64:ff9b::169.254.169.254', 'metadata'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['2002:0a00:0001::', 'private'],
    ['::ffff:169.254.1.1', 'link_local'],
    ['::ffff:100.64.0.1', 'cgnat'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:93.184.216.34', 'public'],
    ['64:ff9b::5db8:d822', 'public'],
    ['2002:5db8:d822::1', 'public'],
  ])('classifies %s by the IPv4 address it embeds, as %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });
});

describe('checkWebhookUrl with an IP address as host', () => {
  it.each<[string, boolean, boolean]>([
    // url, allowed without private addresses, allowed with them
    ['https://93.184.216.34/hook', true, true],
    ['https://[2606:2800:220:1:248:1893:25c8:1946]/hook', true, true],
    ['https://127.0.0.1/hook', false, true],
    ['https://[::1]/hook', false, true],
    ['https://10.1.2.3/hook', false, true],
    ['https://172.20.0.1/hook', false, true],
    ['https://192.168.0.10/hook', false, true],
    ['https://[fd12::1]/hook', false, true],
    ['https://100.64.0.1/hook', false, true],
    ['https://169.254.169.254/latest/meta-data/', false, false],
    ['https://[::ffff:169.254.169.254]/', false, false],
    ['https://[fd00:ec2::254]/', false, false],
    ['https://100.100.100.200/', false, false],
    ['https://169.254.10.10/', false, false],
    ['https://[fe80::1]/', false, false],
    ['https://0.0.0.0/', false, false],
    ['https://[::]/', false, false],
    ['https://224.0.0.1/', false, false],
    ['https://255.255.255.255/', false, false],
    ['https://240.0.0.1/', false, false],
  ])('%s: allowed=%s, allowed with private addresses=%s', async (url, strict, local) => {
    expect((await verdict(url, false)).ok).toBe(strict);
    expect((await verdict(url, true)).ok).toBe(local);
  });

  it('returns the address itself, without asking the resolver', async () => {
    const spy = vi.fn(resolve);
    const result = await checkWebhookUrl('https://93.184.216.34/hook', { allowPrivate: false, resolve: spy });
    expect(result).toMatchObject({ ok: true, addresses: ['93.184.216.34'] });
    expect(spy).not.toHaveBeenCalled();
  });

  it('says why, naming the class and not the address', async () => {
    expect(await verdict('https://10.1.2.3/', false)).toEqual({
      ok: false,
      reason: 'host is a forbidden address (private)',
    });
  });
});

describe('checkWebhookUrl with the metadata address however written', () => {
  it.each([
    'http://2852039166/',
    'http://0xa9fea9fe/',
    'http://0xa9.0xfe.0xa9.0xfe/',
    'http://0251.0376.0251.0376/',
    'http://169.254.43518/',
    'http://169.16689662/',
    'http://169.254.169.254./',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
    'http://[64:ff9b::169.254.169.254]/',
    'http://[2002:a9fe:a9fe::]/',
    'https://2852039166/',
    'https://0xa9.0xfe.0xa9.0xfe/latest/meta-data/',
  ])('refuses %s, even when private addresses are allowed', async (url) => {
    expect(await verdict(url, true)).toEqual({ ok: false, reason: 'host is a forbidden address (metadata)' });
    expect((await verdict(url, false)).ok).toBe(false);
  });
});

describe('checkWebhookUrl with loopback however written', () => {
  it.each([
    'https://2130706433/',
    'https://0x7f000001/',
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://[::ffff:127.0.0.1]/',
    'https://[0:0:0:0:0:0:0:1]/',
  ])('refuses %s unless private addresses are allowed', async (url) => {
    expect(await verdict(url, false)).toEqual({
      ok: false,
      reason: 'host is a forbidden address (loopback)',
    });
    expect((await verdict(url, true)).ok).toBe(true);
  });
});

describe('checkWebhookUrl with a hostname', () => {
  it('accepts a name whose every address is public, and returns them all', async () => {
    expect(await verdict('https://good.example/hook', false)).toMatchObject({
      ok: true,
      addresses: fakeDns['good.example'],
    });
  });

  it.each([
    ['evil.example', 'metadata'],
    ['evil6.example', 'metadata'],
    ['metadata.google.internal', 'metadata'],
    ['mixed-local.example', 'metadata'],
  ])(
    'refuses %s, which resolves to a %s address, even when private addresses are allowed',
    async (host, kind) => {
      expect(await verdict(`https://${host}/hook`, true)).toEqual({
        ok: false,
        reason: `host resolves to a forbidden address (${kind})`,
      });
    },
  );

  it.each([
    ['localhost', 'loopback'],
    ['app.localhost', 'loopback'],
    ['svc.internal', 'private'],
    ['cgnat.example', 'cgnat'],
  ])(
    'refuses %s, which resolves to a %s address, unless private addresses are allowed',
    async (host, kind) => {
      expect(await verdict(`https://${host}/hook`, false)).toEqual({
        ok: false,
        reason: `host resolves to a forbidden address (${kind})`,
      });
      expect((await verdict(`https://${host}/hook`, true)).ok).toBe(true);
    },
  );

  it('refuses a name with one forbidden address among public ones (DNS rebinding)', async () => {
    expect(await verdict('https://rebind.example/hook', false)).toEqual({
      ok: false,
      reason: 'host resolves to a forbidden address (private)',
    });
  });

  it.each(['nowhere.example', 'empty.example'])('refuses %s, which does not resolve', async (host) => {
    expect(await verdict(`https://${host}/hook`, true)).toEqual({
      ok: false,
      reason: 'host does not resolve',
    });
  });

  it('says when the resolver could not answer, rather than that the host does not resolve', async () => {
    const temporary: Resolver = async (hostname) => {
      throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${hostname}`), { code: 'EAI_AGAIN' });
    };
    expect(
      await checkWebhookUrl('https://hooks.example.com/', { allowPrivate: false, resolve: temporary }),
    ).toEqual({
      ok: false,
      reason: 'host could not be resolved now (EAI_AGAIN): try again',
    });
  });

  it('gives up on a resolver that does not answer in time, as on one that could not answer', async () => {
    // Without the timeout this would wait for ever (the test's own timeout would fail it).
    const silent: Resolver = () => new Promise(() => {});
    expect(
      await checkWebhookUrl('https://hooks.example.com/', {
        allowPrivate: false,
        resolve: silent,
        resolveTimeoutMs: 50,
      }),
    ).toEqual({ ok: false, reason: 'host could not be resolved now (ETIMEOUT): try again' });
  });

  it('checks the shape before resolving anything', async () => {
    const spy = vi.fn(resolve);
    const result = await checkWebhookUrl('http://good.example/', { allowPrivate: false, resolve: spy });
    expect(result).toEqual({ ok: false, reason: 'url must use https' });
    expect(spy).not.toHaveBeenCalled();
  });

  it('refuses localhost through the system resolver unless private addresses are allowed', async () => {
    expect(await checkWebhookUrl('https://localhost/hook', STRICT)).toEqual({
      ok: false,
      reason: 'host resolves to a forbidden address (loopback)',
    });
    expect((await checkWebhookUrl('https://localhost/hook', LOCAL)).ok).toBe(true);
  });
});

interface Received {
  method: string | undefined;
  url: string | undefined;
  host: string | undefined;
  body: string;
}

const servers: Server[] = [];

async function listen(handler: RequestListener): Promise<number> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return (server.address() as AddressInfo).port;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function checked(url: string): Promise<Extract<UrlCheck, { ok: true }>> {
  const result = await checkWebhookUrl(url, { allowPrivate: true, resolve: async () => ['127.0.0.1'] });
  if (!result.ok) throw new Error(`expected ${url} to pass the check: ${result.reason}`);
  return result;
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  }
});

describe('postPinned', () => {
  it('POSTs the body with the caller headers and returns a 2xx status, its duration and body', async () => {
    const received: Received[] = [];
    const port = await listen(async (request, response) => {
      const body = await readBody(request);
      received.push({ method: request.method, url: request.url, host: request.headers.host, body });
      response.writeHead(201, { 'content-type': 'text/plain' }).end('accepted');
    });
    const result = await postPinned(
      await checked(`http://127.0.0.1:${port}/hook?merchant=m1`),
      '{"type":"payment.succeeded"}',
      { 'content-type': 'application/json', 'webhook-id': 'msg_1' },
      2000,
    );
    expect(result).toEqual({
      status: 201,
      error: null,
      duration_ms: expect.any(Number),
      body_excerpt: 'accepted',
    });
    expect(result.duration_ms).toBeGreaterThanOrEqual(0);
    expect(received).toEqual([
      {
        method: 'POST',
        url: '/hook?merchant=m1',
        host: `127.0.0.1:${port}`,
        body: '{"type":"payment.succeeded"}',
      },
    ]);
  });

  it('connects to the checked address without resolving the name again, and sends the original Host', async () => {
    const hosts: (string | undefined)[] = [];
    const port = await listen((request, response) => {
      hosts.push(request.headers.host);
      response.writeHead(204).end();
    });
    // hook.example resolves only through the checking resolver; a second lookup would fail.
    const result = await postPinned(await checked(`http://hook.example:${port}/hook`), '{}', {}, 2000);
    expect(result).toMatchObject({ status: 204, error: null, body_excerpt: '' });
    expect(hosts).toEqual([`hook.example:${port}`]);
  });

  it('tries the next address while none takes the connection, and only then', async () => {
    const hosts: (string | undefined)[] = [];
    const port = await listen((request, response) => {
      hosts.push(request.headers.host);
      response.writeHead(204).end();
    });
    const url = new URL(`http://hook.example:${port}/hook`);
    // 127.0.0.2 refuses (the server listens on 127.0.0.1 only); 192.0.2.1 (TEST-NET) is unreachable
    // or drops the connection: each leaves the delivery to the next address, within the timeout.
    const through = await postPinned(
      { ok: true, url, addresses: ['127.0.0.2', '127.0.0.1'] },
      '{}',
      {},
      2000,
    );
    expect(through).toMatchObject({ status: 204, error: null });
    const unreachable = await postPinned(
      { ok: true, url, addresses: ['192.0.2.1', '127.0.0.1'] },
      '{}',
      {},
      8000,
    );
    expect(unreachable).toMatchObject({ status: 204, error: null });
    expect(hosts).toEqual([`hook.example:${port}`, `hook.example:${port}`]);
    // None takes it: the last address's error.
    expect(
      await postPinned({ ok: true, url, addresses: ['127.0.0.2', '127.0.0.3'] }, '{}', {}, 2000),
    ).toMatchObject({
      status: null,
      error: 'ECONNREFUSED',
    });
  });

  it('never tries another address once one took the connection (the receiver may have the request)', async () => {
    let second = 0;
    const port = await listen((request) => request.socket.destroy());
    const other = createServer((_request, response) => {
      second += 1;
      response.writeHead(200).end();
    });
    servers.push(other);
    await new Promise<void>((ready) => other.listen(port, '127.0.0.2', ready));
    const url = new URL(`http://hook.example:${port}/hook`);
    const result = await postPinned({ ok: true, url, addresses: ['127.0.0.1', '127.0.0.2'] }, '{}', {}, 2000);
    expect(result).toMatchObject({ status: null, error: 'ECONNRESET' });
    expect(second).toBe(0);
  });

  it('ignores a Host header from the caller: the host is the URL host', async () => {
    const hosts: (string | undefined)[] = [];
    const port = await listen((request, response) => {
      hosts.push(request.headers.host);
      response.writeHead(200).end();
    });
    await postPinned(await checked(`http://127.0.0.1:${port}/`), '{}', { Host: 'internal.example' }, 2000);
    expect(hosts).toEqual([`127.0.0.1:${port}`]);
  });

  it('does not follow a redirect: a 302 is the result and its target receives nothing', async () => {
    let targetHits = 0;
    const target = await listen((_request, response) => {
      targetHits += 1;
      response.writeHead(200).end();
    });
    const port = await listen((_request, response) => {
      response.writeHead(302, { location: `http://127.0.0.1:${target}/elsewhere` }).end('moved');
    });
    const result = await postPinned(await checked(`http://127.0.0.1:${port}/hook`), '{}', {}, 2000);
    expect(result).toMatchObject({ status: 302, error: null, body_excerpt: 'moved' });
    await new Promise((wait) => setTimeout(wait, 100));
    expect(targetHits).toBe(0);
  });

  it('returns a non-2xx status as a result, not an error', async () => {
    const port = await listen((_request, response) => {
      response.writeHead(500).end('boom');
    });
    const result = await postPinned(await checked(`http://127.0.0.1:${port}/hook`), '{}', {}, 2000);
    expect(result).toMatchObject({ status: 500, error: null, body_excerpt: 'boom' });
  });

  it('reads at most 1 KiB of the answer', async () => {
    const port = await listen((_request, response) => {
      response.writeHead(200).end('x'.repeat(100_000));
    });
    const result = await postPinned(await checked(`http://127.0.0.1:${port}/hook`), '{}', {}, 2000);
    expect(result).toMatchObject({ status: 200, error: null });
    expect(result.body_excerpt).toBe('x'.repeat(1024));
  });

  it('gives up on a server that never answers with a timeout, within the time allowed', async () => {
    const port = await listen(() => {});
    const result = await postPinned(await checked(`http://127.0.0.1:${port}/hook`), '{}', {}, 300);
    expect(result).toEqual({
      status: null,
      error: 'timeout',
      duration_ms: expect.any(Number),
      body_excerpt: null,
    });
    expect(result.duration_ms).toBeGreaterThanOrEqual(250);
    expect(result.duration_ms).toBeLessThan(1500);
  });

  it('keeps the status of an answer whose body stalls past the timeout', async () => {
    const port = await listen((_request, response) => {
      response.writeHead(200);
      response.write('partial');
    });
    const result = await postPinned(await checked(`http://127.0.0.1:${port}/hook`), '{}', {}, 300);
    expect(result).toMatchObject({ status: 200, error: null, body_excerpt: 'partial' });
  });

  it('returns a refused connection as a result without a status', async () => {
    const port = await listen(() => {});
    const server = servers.pop();
    await new Promise((closed) => server?.close(closed));
    const result = await postPinned(await checked(`http://127.0.0.1:${port}/hook`), '{}', {}, 2000);
    expect(result).toEqual({
      status: null,
      error: 'ECONNREFUSED',
      duration_ms: expect.any(Number),
      body_excerpt: null,
    });
  });

  it('returns a header HTTP cannot carry as a result without a status, instead of throwing', async () => {
    const port = await listen((_request, response) => {
      response.writeHead(200).end();
    });
    const result = await postPinned(
      await checked(`http://127.0.0.1:${port}/`),
      '{}',
      { 'x-bad': 'a\nb' },
      2000,
    );
    expect(result).toMatchObject({ status: null, error: 'ERR_INVALID_CHAR', body_excerpt: null });
  });

  it('sends the original hostname for TLS (SNI) to the pinned address, and a failed handshake is a result', async () => {
    const names: string[] = [];
    // No certificate: the handshake fails right after the server has read the name the client sent.
    const server = createTlsServer({
      SNICallback: (name, done) => {
        names.push(name);
        done(new Error('no certificate here'));
      },
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const port = (server.address() as AddressInfo).port;
    try {
      const result = await postPinned(await checked(`https://hook.example:${port}/hook`), '{}', {}, 2000);
      expect(result).toMatchObject({ status: null, error: expect.any(String), body_excerpt: null });
      expect(names).toEqual(['hook.example']);
    } finally {
      await new Promise((closed) => server.close(closed));
    }
  });
});
