import { describe, expect, it } from 'vitest';
import { attemptError } from '#infra/dashboard/app/format.ts';

describe("the dashboard's words for a delivery attempt's error", () => {
  it("says what a system's code means, keeping the code", () => {
    expect(attemptError('ECONNREFUSED')).toBe(
      'Connection refused: nothing takes connections on that port (ECONNREFUSED)',
    );
    expect(attemptError('ERR_TLS_CERT_ALTNAME_INVALID')).toBe(
      'The TLS certificate is not for this host (ERR_TLS_CERT_ALTNAME_INVALID)',
    );
  });

  it('says our own reasons in words, and why a URL was not called', () => {
    expect(attemptError('timeout')).toBe('No answer in time');
    expect(attemptError('connect timeout')).toBe('Could not connect in time');
    expect(attemptError('endpoint deleted')).toBe('Not sent: the endpoint was deleted');
    expect(attemptError('invalid_url: host resolves to a forbidden address (private)')).toBe(
      'Not sent: host resolves to a forbidden address (private)',
    );
  });

  it('shows an unknown error as it is, no error as nothing, and reads no inherited name', () => {
    expect(attemptError('EWHATEVER')).toBe('EWHATEVER');
    expect(attemptError('constructor')).toBe('constructor');
    expect(attemptError(null)).toBe('');
  });
});
