import { describe, expect, it } from 'vitest';
import { passwordProblem } from '#shared/dashboard/sign-in.ts';

describe("a dashboard user's new password, checked as Cognito checks it", () => {
  it('takes a password with each class and one of Cognito symbols, or a space inside', () => {
    for (const password of [
      'Abcdefgh1234!',
      'Abcdefgh1234`',
      'Abcdefgh 1234',
      'Abcdefgh1234=',
      'Abc\\defgh1234',
      // A no-break space at the end is no white space to Cognito (Java's \\s is ASCII).
      'Abcdefgh 1234\u00a0',
    ]) {
      expect(passwordProblem(password), password).toBeUndefined();
    }
  });

  it('refuses a space at either end, and a symbol Cognito does not count (so AWS would refuse it too)', () => {
    expect(passwordProblem(' Abcdefgh1234!')).toBe('Must not start or end with a space');
    expect(passwordProblem('Abcdefgh1234! ')).toBe('Must not start or end with a space');
    for (const password of ['Abcdefgh1234€', 'Abcdefgh1234é', 'Abcdefgh1234\u00a0x']) {
      expect(passwordProblem(password), password).toMatch(
        /^Must have a symbol \(\^ \$ \* .* or a space inside\)$/,
      );
    }
  });

  it("refuses a password short of the pool's length or without each class, naming what is missing (the local Cognito does not check)", () => {
    expect(passwordProblem('Abcdefgh123!')).toBeUndefined();
    expect(passwordProblem('Abcdefg123!')).toBe('Must have at least 12 characters');
    expect(passwordProblem('abcdefgh1234!')).toBe('Must have an upper-case letter');
    expect(passwordProblem('ABCDEFGH1234!')).toBe('Must have a lower-case letter');
    expect(passwordProblem('Abcdefghijkl!')).toBe('Must have a digit');
  });
});
