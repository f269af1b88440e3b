import { type Headers, headerValues, type MultiValueHeaders } from '#shared/http/validation.ts';

/** The credential headers (API.md §2); each must be sent exactly once. */
export const CREDENTIAL_HEADERS = ['x-api-key', 'x-api-secret'] as const;

/**
 * Every value sent for each credential header, whatever the case of its name (API Gateway and the
 * local gateway both put every occurrence in `multiValueHeaders`).
 */
export function credentialValues(
  headers: Headers,
  multiValueHeaders: MultiValueHeaders,
): Record<string, string[]> {
  return headerValues(headers, multiValueHeaders, CREDENTIAL_HEADERS);
}

/** A credential header sent more than once is never guessed at (API.md §11): it is a 401. */
export function hasRepeatedCredentials(headers: Headers, multiValueHeaders: MultiValueHeaders): boolean {
  return Object.values(credentialValues(headers, multiValueHeaders)).some((values) => values.length > 1);
}
