import { createServer } from 'node:http';
import { listenOnLoopback } from '#test/support/loopback.ts';
import { type SignatureScope, signatureScope, signatureValid } from '#test/support/sigv4.ts';

/*
 * A stand-in for the one Secrets Manager call the functions and the keys CLI make, GetSecretValue
 * (AWS JSON 1.1: `POST /`, the operation in `X-Amz-Target`). It answers from the secrets it is
 * given, as Secrets Manager does (`SecretString` or `SecretBinary`, `ResourceNotFoundException`
 * under `__type`), and records every request with the scope of its signature.
 */

export interface RecordedSecretsRequest {
  target: string | undefined;
  contentType: string | undefined;
  body: unknown;
  /** The scope the SigV4 signature names; undefined when unsigned. */
  scope?: SignatureScope;
  /** Whether the signature is the one the stand-in computes for the request as received. */
  signatureValid: boolean;
}

/** A secret as Secrets Manager holds it: text, or bytes (answered base64, as the service does). */
export type StoredSecret = { SecretString: string } | { SecretBinary: Buffer };

export interface SecretsManagerStandIn {
  url: string;
  requests: RecordedSecretsRequest[];
  /** Secret id (name or ARN) → its value. */
  secrets: Map<string, StoredSecret>;
  /** Answers the next requests with these statuses (400 as `ThrottlingException`, 5xx as `InternalServiceError`). */
  failNext(...statuses: number[]): void;
  /** Takes the next `count` requests and never answers them (a service that hangs). */
  stallNext(count: number): void;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = { 400: 'ThrottlingException', 500: 'InternalServiceError' };

/** Starts the stand-in on 127.0.0.1. */
export async function startSecretsManagerStandIn(): Promise<SecretsManagerStandIn> {
  const requests: RecordedSecretsRequest[] = [];
  const secrets = new Map<string, StoredSecret>();
  const failures: number[] = [];
  let stalls = 0;

  function answer(request: RecordedSecretsRequest): [number, object] {
    const failure = failures.shift();
    if (failure !== undefined) {
      const type = ERROR_TYPES[failure] ?? 'InternalServiceError';
      return [failure, { __type: type, message: 'Injected failure' }];
    }
    if (request.target !== 'secretsmanager.GetSecretValue')
      return [400, { __type: 'UnknownOperationException' }];
    if (!request.signatureValid)
      return [400, { __type: 'InvalidSignatureException', message: 'The request signature is wrong' }];
    const id = (request.body as { SecretId?: unknown } | undefined)?.SecretId;
    const secret = typeof id === 'string' ? secrets.get(id) : undefined;
    if (!secret) {
      return [
        400,
        { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." },
      ];
    }
    const value =
      'SecretString' in secret
        ? secret
        : { SecretBinary: Buffer.from(secret.SecretBinary).toString('base64') };
    return [200, { ARN: id, Name: id, VersionId: 'v1', VersionStages: ['AWSCURRENT'], ...value }];
  }

  const server = createServer(async (incoming, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const scope = signatureScope(incoming);
    const url = new URL(incoming.url ?? '/', 'http://stand-in');
    const request: RecordedSecretsRequest = {
      target: incoming.headers['x-amz-target'] as string | undefined,
      contentType: incoming.headers['content-type'],
      body: text ? JSON.parse(text) : undefined,
      ...(scope ? { scope } : {}),
      signatureValid: scope ? await signatureValid(incoming, url, text, scope) : false,
    };
    requests.push(request);
    if (stalls > 0) {
      stalls -= 1;
      return; // Held open until the client gives up or the stand-in closes.
    }
    const [status, json] = answer(request);
    response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(json));
  });
  return {
    ...(await listenOnLoopback(server)),
    requests,
    secrets,
    failNext: (...statuses) => failures.push(...statuses),
    stallNext: (count) => {
      stalls += count;
    },
  };
}
