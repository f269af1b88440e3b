import { describe, expect, it } from 'vitest';
import { problem } from '#infra/dashboard/app/format.ts';

describe("the dashboard's words for a refusal", () => {
  it('names each refused field as its form does, without the API prefix or its paths', () => {
    const refused = {
      message: 'Request validation failed',
      errors: [
        { field: 'allowed_ips.0', message: 'Not an IP address or CIDR block: 10.0.0.999/33' },
        { field: 'query.from', message: 'Must not be after to' },
        { field: 'new_password', message: 'Must have a digit' },
        { field: 'some_field', message: 'Unknown field.' },
      ],
    };
    expect(problem(refused)).toBe(
      'Allowed IPs, entry 1: Not an IP address or CIDR block: 10.0.0.999/33; From: Must not be after to; New password: Must have a digit; some field: Unknown field.',
    );
  });

  it('keeps the message of a refusal without fields, and of anything else', () => {
    expect(problem({ message: 'At most 10 API keys can work at once' })).toBe(
      'At most 10 API keys can work at once',
    );
    expect(problem(new Error('Could not reach the service'))).toBe('Could not reach the service');
    expect(problem('plain')).toBe('plain');
  });
});
