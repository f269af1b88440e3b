import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';

/*
 * SigV4 as AWS checks it, for the stand-ins of AWS services the code calls without an SDK client
 * (API Gateway, Secrets Manager): who signed a request, for which region and service, and whether
 * the signature is right.
 */

/** The credentials the stand-ins check signatures with (any access key id, this secret). */
export const STAND_IN_SECRET_KEY = 'stand-in-secret-key';

/** The credential scope an `Authorization` header names. */
export interface SignatureScope {
  accessKeyId: string;
  region: string;
  service: string;
}

/** The scope of a request's SigV4 signature; undefined when the request is not signed. */
export function signatureScope(incoming: IncomingMessage): SignatureScope | undefined {
  const scope = /Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(
    String(incoming.headers.authorization ?? ''),
  );
  return scope ? { accessKeyId: scope[1] ?? '', region: scope[2] ?? '', service: scope[3] ?? '' } : undefined;
}

/**
 * Signs the request as received again (its signed headers, its `x-amz-date`) with the stand-in's
 * secret and the scope the signature names, and compares: a header changed or added to the signed
 * set after signing, or a path or query sent otherwise than signed, fails.
 */
export async function signatureValid(
  incoming: IncomingMessage,
  url: URL,
  body: string,
  { accessKeyId, region, service }: SignatureScope,
): Promise<boolean> {
  const authorization = String(incoming.headers.authorization);
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)?.[1]?.split(';') ?? [];
  const amzDate = String(incoming.headers['x-amz-date'] ?? '');
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!date) return false;
  // The signer takes a given `x-amz-content-sha256` as the body's hash: it must be the body's.
  const claimed = incoming.headers['x-amz-content-sha256'];
  if (claimed !== undefined && claimed !== createHash('sha256').update(body).digest('hex')) return false;
  const headers = Object.fromEntries(
    signedHeaders.map((name) => [name, String(incoming.headers[name] ?? '')]),
  );
  const request = new HttpRequest({
    method: incoming.method ?? '',
    hostname: url.hostname,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    body: body || undefined,
  });
  const signer = new SignatureV4({
    service,
    region,
    sha256: Sha256,
    credentials: { accessKeyId, secretAccessKey: STAND_IN_SECRET_KEY },
  });
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = date.slice(1).map(Number);
  const signingDate = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const signed = await signer.sign(request, { signingDate });
  return signed.headers.authorization === authorization;
}
