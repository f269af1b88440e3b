/** The credential headers (API.md §2); each must be sent exactly once. */
export const CREDENTIAL_HEADERS = ['x-api-key', 'x-api-secret'] as const;

type Headers = Record<string, string | undefined> | null | undefined;
type MultiValueHeaders = Record<string, string[] | undefined> | null | undefined;

/**
 * Every value sent for each credential header, whatever the case of its name. API Gateway and the
 * local gateway both put every occurrence in `multiValueHeaders`; `headers` is the fallback.
 */
export function credentialValues(
  headers: Headers,
  multiValueHeaders: MultiValueHeaders,
): Record<string, string[]> {
  // Null-prototype: a header called `constructor` or `__proto__` is just another header.
  const found: Record<string, string[]> = Object.create(null);
  for (const name of CREDENTIAL_HEADERS) found[name] = [];
  const source: Record<string, readonly (string | undefined)[] | undefined> = multiValueHeaders
    ? multiValueHeaders
    : Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name, [value]]));
  for (const [name, values] of Object.entries(source)) {
    const lower = name.toLowerCase();
    if (lower in found) found[lower]?.push(...(values ?? []).filter((value) => value !== undefined));
  }
  return found;
}

/** A credential header sent more than once is never guessed at (API.md §11): it is a 401. */
export function hasRepeatedCredentials(headers: Headers, multiValueHeaders: MultiValueHeaders): boolean {
  return Object.values(credentialValues(headers, multiValueHeaders)).some((values) => values.length > 1);
}
