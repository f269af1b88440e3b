import { lookup } from 'node:dns/promises';
import type { ClientRequest, IncomingMessage } from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { within } from '#shared/time-limit.ts';

/** Every address a hostname resolves to (A and AAAA records). */
export type Resolver = (hostname: string) => Promise<string[]>;

/** What a webhook URL may point at. */
export interface UrlPolicy {
  /**
   * Allows `http://`, loopback, private and CGNAT addresses, for `npm start` only
   * (`MERCHANT_WEBHOOK_ALLOW_PRIVATE`). Link-local, metadata and reserved addresses stay refused.
   */
  allowPrivate: boolean;
  /** Resolves hostnames; defaults to the operating system's resolver (`dns.lookup`). */
  resolve?: Resolver;
  /**
   * How long resolving may take (default RESOLVE_TIMEOUT_MS): a name server that never answers
   * would otherwise hold a delivery, or a registration, for as long as the resolver waits.
   */
  resolveTimeoutMs?: number;
}

/** How long a webhook URL's host may take to resolve, unless the policy says otherwise. */
export const RESOLVE_TIMEOUT_MS = 5_000;

/** The verdict on a webhook URL: the URL and the addresses it may be delivered to, or why not. */
export type UrlCheck = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

/** The kind of network an IP address belongs to. */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'cgnat'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

/** The answer to one delivery attempt. */
export interface DeliveryResult {
  /** The HTTP status, or null when no answer arrived. */
  status: number | null;
  /** Why no answer arrived (`timeout`, an error code such as `ECONNREFUSED`), or null. */
  error: string | null;
  duration_ms: number;
  /** The first 1 KiB of the answer's body (UTF-8), or null when no answer arrived. */
  body_excerpt: string | null;
}

const MAX_URL_LENGTH = 2048;
const MAX_EXCERPT_BYTES = 1024;

/** Classes allowed only when the policy allows private addresses (local development). */
const PRIVATE_CLASSES: ReadonlySet<AddressClass> = new Set(['loopback', 'private', 'cgnat']);

type Family = 'ipv4' | 'ipv6';
type Range = readonly [address: string, prefix: number, family: Family];

function blockList(ranges: readonly Range[]): BlockList {
  const list = new BlockList();
  for (const [address, prefix, family] of ranges) list.addSubnet(address, prefix, family);
  return list;
}

/**
 * The special ranges, in the order they are tried: the first that holds an address names its class.
 * Metadata comes first because some metadata addresses sit inside wider ranges (100.100.100.200 in
 * CGNAT, fd00:ec2::254 in unique-local) that local development would otherwise allow. Built on first
 * use: the functions that import this module only to read endpoints never load Node's block lists.
 */
const specialRanges = (): readonly (readonly [AddressClass, BlockList])[] => [
  [
    'metadata',
    blockList([
      ['169.254.169.254', 32, 'ipv4'], // AWS, GCP, Azure, OpenStack instance metadata
      ['169.254.170.2', 32, 'ipv4'], // AWS ECS task metadata and credentials
      ['100.100.100.200', 32, 'ipv4'], // Alibaba Cloud
      ['192.0.0.192', 32, 'ipv4'], // Oracle Cloud
      ['168.63.129.16', 32, 'ipv4'], // Azure wire server: a public address, answered only inside Azure
      ['fd00:ec2::254', 128, 'ipv6'], // AWS instance metadata over IPv6
    ]),
  ],
  [
    'unspecified',
    blockList([
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ]),
  ],
  [
    'loopback',
    blockList([
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ]),
  ],
  [
    'link_local',
    blockList([
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ]),
  ],
  [
    'private',
    blockList([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'], // benchmarking, used as private space by some networks
      ['fc00::', 7, 'ipv6'], // unique local
      ['fec0::', 10, 'ipv6'], // deprecated site-local
    ]),
  ],
  ['cgnat', blockList([['100.64.0.0', 10, 'ipv4']])],
  [
    'multicast',
    blockList([
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ]),
  ],
  [
    'reserved',
    blockList([
      ['240.0.0.0', 4, 'ipv4'], // future use, and 255.255.255.255 broadcast
      ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
      ['192.0.2.0', 24, 'ipv4'], // documentation
      ['198.51.100.0', 24, 'ipv4'], // documentation
      ['203.0.113.0', 24, 'ipv4'], // documentation
      ['192.88.99.0', 24, 'ipv4'], // deprecated 6to4 relay anycast
      ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64: translates to whatever the local network chooses
      ['2001::', 32, 'ipv6'], // Teredo: the embedded client address is obfuscated, so it cannot be checked
      ['2001:2::', 48, 'ipv6'], // benchmarking
      ['2001:10::', 28, 'ipv6'], // ORCHID
      ['2001:20::', 28, 'ipv6'], // ORCHIDv2
      ['2001:db8::', 32, 'ipv6'], // documentation
      ['3fff::', 20, 'ipv6'], // documentation
      ['5f00::', 16, 'ipv6'], // segment routing
      ['100::', 64, 'ipv6'], // discard-only
    ]),
  ],
  // Global unicast IPv6: everything outside it is unassigned or special, so not a webhook host.
  ['public', blockList([['2000::', 3, 'ipv6']])],
];
let ranges: ReturnType<typeof specialRanges> | undefined;

/**
 * The eight 16-bit groups of an IPv6 address (which `isIP` has already accepted), or undefined when
 * it cannot be read, so a caller fails closed.
 */
function ipv6Groups(address: string): number[] | undefined {
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  let text = address;
  if (dotted?.[1] !== undefined && dotted[2] !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[2].split('.').map(Number);
    text = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((group) => parseInt(group, 16)) : [];
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return undefined;
  const groups = [...head, ...new Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...tail];
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff)
    ? groups
    : undefined;
}

function ipv4From(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

function allZero(groups: readonly number[]): boolean {
  return groups.every((group) => group === 0);
}

/**
 * The IPv4 address an IPv6 address carries and is routed to, if any: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), well-known NAT64
 * (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::). Each can reach the IPv4 address it embeds, so it
 * is judged as that address.
 */
function embeddedIpv4(groups: readonly number[]): string | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, , g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const prefix = groups.slice(0, 4);
  if (g0 === 0x2002) return ipv4From(g1, g2);
  const mapped = allZero(prefix) && g4 === 0 && g5 === 0xffff;
  const translated = allZero(prefix) && g4 === 0xffff && g5 === 0;
  const compatible = allZero(groups.slice(0, 6)) && (g6 !== 0 || g7 > 1);
  const nat64 = g0 === 0x64 && g1 === 0xff9b && allZero(groups.slice(2, 6));
  return mapped || translated || compatible || nat64 ? ipv4From(g6, g7) : undefined;
}

/** The first special range holding `address` (or `public` for global unicast IPv6). */
function classifyIn(address: string, family: Family): AddressClass | undefined {
  ranges ??= specialRanges();
  return ranges.find(([, list]) => list.check(address, family))?.[0];
}

/**
 * The class of an IP address: `public` for an ordinary internet address, otherwise the special range
 * it belongs to. An IPv6 address that embeds an IPv4 address takes that address's class. Anything
 * that is not an IP address is `reserved`, so a caller that refuses non-public addresses fails closed.
 */
export function classifyAddress(address: string): AddressClass {
  // A zone (fe80::1%eth0) names an interface, not part of the address.
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const version = isIP(bare);
  // (The global unicast range is IPv6 only: an IPv4 address in no special range is public.)
  if (version === 4) return classifyIn(bare, 'ipv4') ?? 'public';
  if (version !== 6) return 'reserved';
  const groups = ipv6Groups(bare);
  if (!groups) return 'reserved';
  const ipv4 = embeddedIpv4(groups);
  if (ipv4) return classifyAddress(ipv4);
  return classifyIn(bare, 'ipv6') ?? 'reserved';
}

function isAllowed(kind: AddressClass, allowPrivate: boolean): boolean {
  return kind === 'public' || (allowPrivate && PRIVATE_CLASSES.has(kind));
}

function parseUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/**
 * Checks a webhook URL's shape, without DNS: `https://` (or `http://` when private addresses are
 * allowed), no user name or password, a host, not port 0, at most 2048 characters, no fragment. The URL returned
 * is the parsed one: store and deliver to its `href`, not to `raw`.
 */
export function checkUrlShape(
  raw: string,
  policy: Pick<UrlPolicy, 'allowPrivate'>,
): { ok: true; url: URL } | { ok: false; reason: string } {
  const tooLong = { ok: false, reason: `url is longer than ${MAX_URL_LENGTH} characters` } as const;
  if (raw.length > MAX_URL_LENGTH) return tooLong;
  const url = parseUrl(raw);
  if (!url) return { ok: false, reason: 'url is not a valid absolute URL' };
  const schemeOk = url.protocol === 'https:' || (policy.allowPrivate && url.protocol === 'http:');
  if (!schemeOk) return { ok: false, reason: 'url must use https' };
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'url must not contain user info' };
  }
  if (url.hostname === '') return { ok: false, reason: 'url must have a host' };
  // Port 0 is no port a connection can reach (the parser already refuses one above 65535).
  if (url.port === '0') return { ok: false, reason: 'url must not use port 0' };
  // `hash` is empty for a bare trailing '#', but `href` keeps it; '#' appears in `href` only there.
  if (url.href.includes('#')) return { ok: false, reason: 'url must not contain a fragment' };
  // Parsing can lengthen a URL: percent-encoding triples a character.
  if (url.href.length > MAX_URL_LENGTH) return tooLong;
  return { ok: true, url };
}

/** The URL's host as an address or name: IPv6 literals lose their brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** Resolver errors that say the name has no address; any other (EAI_AGAIN, SERVFAIL…) may pass. */
const NO_SUCH_NAME: ReadonlySet<string> = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA']);

/**
 * The addresses a name resolves to, without duplicates (empty when it has none), or the code of a
 * failure that says nothing about the name (the resolver could not answer now).
 */
async function resolveAll(
  hostname: string,
  resolve: Resolver,
  timeoutMs: number,
): Promise<string[] | { failed: string }> {
  try {
    // The lookup itself cannot be cancelled (getaddrinfo); past its time it is left to finish unheard.
    const late = () => Object.assign(new Error('resolving timed out'), { code: 'ETIMEOUT' });
    return [...new Set(await within(resolve(hostname), timeoutMs, late))];
  } catch (error) {
    const code = String((error as { code?: unknown }).code ?? 'unknown error');
    return NO_SUCH_NAME.has(code) ? [] : { failed: code };
  }
}

/**
 * Checks a webhook URL before registration and before every delivery: its shape, then every address
 * its host resolves to (an IP literal is its own address). One forbidden address refuses the URL,
 * since the connection could go to any of them. Deliver only to the addresses returned (see
 * {@link postPinned}); resolving again could give another answer.
 */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy): Promise<UrlCheck> {
  const shape = checkUrlShape(raw, policy);
  if (!shape.ok) return shape;
  const host = hostOf(shape.url);
  const literal = isIP(host) !== 0;
  const addresses = literal
    ? [host]
    : await resolveAll(host, policy.resolve ?? systemResolver, policy.resolveTimeoutMs ?? RESOLVE_TIMEOUT_MS);
  if (!Array.isArray(addresses)) {
    return { ok: false, reason: `host could not be resolved now (${addresses.failed}): try again` };
  }
  if (addresses.length === 0) return { ok: false, reason: 'host does not resolve' };
  for (const address of addresses) {
    const kind = classifyAddress(address);
    if (!isAllowed(kind, policy.allowPrivate)) {
      // The class, not the address: a resolved address can describe the network it was resolved in.
      const reason = literal
        ? `host is a forbidden address (${kind})`
        : `host resolves to a forbidden address (${kind})`;
      return { ok: false, reason };
    }
  }
  return { ok: true, url: shape.url, addresses };
}

/** The caller's headers, less any they may not set: the host and length follow from the URL and body. */
function requestHeaders(url: URL, body: string, headers: Record<string, string>): Record<string, string> {
  const own = Object.entries(headers).filter(
    ([name]) => !['host', 'content-length'].includes(name.toLowerCase()),
  );
  return { ...Object.fromEntries(own), host: url.host, 'content-length': String(Buffer.byteLength(body)) };
}

function errorCode(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return typeof code === 'string' ? code : error.message;
  }
  return String(error);
}

/**
 * POSTs `body` to a checked URL over a connection to a checked address itself: Node does not
 * resolve the host again, so DNS rebinding cannot move the delivery elsewhere. The addresses are
 * tried in turn while none can be connected to (a host whose first address is unreachable, an IPv6
 * one from a network without IPv6 say, still gets its delivery through another): nothing reached
 * the receiver then, so nothing is sent twice. Once connected, that address's answer is the result.
 * TLS still sends the original hostname (SNI) and checks the certificate against it. Redirects are
 * not followed: a 3xx is an answer like any other non-2xx. The whole attempt, body included, every
 * address tried, is bounded by `timeoutMs`.
 *
 * Never throws. Without an answer, `status` is null and `error` says why (`timeout`, or an error
 * code such as `ECONNREFUSED` or `ERR_TLS_CERT_ALTNAME_INVALID`; the last address's when none could
 * be connected to). Once a status has arrived it is the answer: a body that stalls or breaks off
 * only shortens `body_excerpt`, of which at most 1 KiB is read.
 */
export async function postPinned(
  check: Extract<UrlCheck, { ok: true }>,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  if (check.addresses.length === 0) {
    return { status: null, error: 'no address', duration_ms: 0, body_excerpt: null };
  }
  // Plain HTTP is allowed only with private addresses (local development): loaded on first use, so
  // a deployed function, which posts over HTTPS only, never loads node:http.
  const send: typeof https.request =
    check.url.protocol === 'https:' ? https.request : (await import('node:http')).request;
  let result: DeliveryResult = { status: null, error: 'timeout', duration_ms: 0, body_excerpt: null };
  for (const [i, address] of check.addresses.entries()) {
    const left = timeoutMs - (performance.now() - started);
    if (left <= 0) break;
    // An address that does not even take the connection (its packets dropped) leaves time for the next.
    const last = i === check.addresses.length - 1;
    const connectWithin = last ? left : Math.min(left, CONNECT_WITHIN_MS);
    const attempt = await postTo(send, check.url, address, body, headers, left, connectWithin);
    result = attempt.result;
    if (attempt.connected || result.status !== null || result.error === 'timeout') break;
  }
  return { ...result, duration_ms: elapsed() };
}

/** How long an address that more addresses follow is given to take the connection. */
const CONNECT_WITHIN_MS = 2_500;

/**
 * One POST to one address within `timeoutMs`, its connection made within `connectWithinMs` (else
 * `connect timeout`); `connected` once a connection to it was made (from then on the receiver may
 * have the request, so no other address is tried).
 */
function postTo(
  send: typeof https.request,
  url: URL,
  address: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  connectWithinMs: number,
): Promise<{ result: DeliveryResult; connected: boolean }> {
  const hostname = hostOf(url);
  return new Promise((resolve) => {
    let status: number | null = null;
    let connected = false;
    const chunks: Buffer[] = [];
    let received = 0;
    let request: ClientRequest | undefined;
    let timer: NodeJS.Timeout | undefined;
    let connectTimer: NodeJS.Timeout | undefined;
    const finish = (error: string | null) => {
      if (timer === undefined) return;
      clearTimeout(timer);
      clearTimeout(connectTimer);
      timer = undefined;
      request?.destroy();
      const excerpt =
        status === null ? null : Buffer.concat(chunks).subarray(0, MAX_EXCERPT_BYTES).toString('utf8');
      resolve({
        result: { status, error: status === null ? error : null, duration_ms: 0, body_excerpt: excerpt },
        connected,
      });
    };
    const onResponse = (response: IncomingMessage) => {
      status = response.statusCode ?? null;
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (received >= MAX_EXCERPT_BYTES) finish(null);
      });
      response.on('end', () => finish(null));
      response.on('error', () => finish(null));
      response.on('close', () => finish(null));
    };

    timer = setTimeout(() => finish('timeout'), timeoutMs);
    if (connectWithinMs < timeoutMs) {
      connectTimer = setTimeout(() => {
        if (!connected) finish('connect timeout');
      }, connectWithinMs);
    }
    try {
      request = send(
        {
          method: 'POST',
          // An IP address as `host`: Node connects to it without a lookup.
          host: address,
          port: url.port === '' ? undefined : Number(url.port),
          path: `${url.pathname}${url.search}`,
          headers: requestHeaders(url, body, headers),
          // SNI carries names only; for an IP literal URL the certificate is checked against the IP.
          servername: isIP(hostname) === 0 ? hostname : undefined,
          // A fresh connection per delivery: no socket pooled across merchants or addresses.
          agent: false,
        },
        onResponse,
      );
      request.on('socket', (socket) =>
        socket.once('connect', () => {
          connected = true;
        }),
      );
      request.on('error', (error) => finish(errorCode(error)));
      request.end(body);
    } catch (error) {
      // A header the caller passed that HTTP cannot carry is refused synchronously by Node: the same
      // for every address.
      connected = true;
      finish(errorCode(error));
    }
  });
}
