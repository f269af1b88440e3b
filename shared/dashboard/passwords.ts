import { randomInt } from 'node:crypto';
import { DASHBOARD_USER_POOL } from '#shared/dashboard/user-pool.ts';

const CLASSES = ['ABCDEFGHJKLMNPQRSTUVWXYZ', 'abcdefghijkmnopqrstuvwxyz', '23456789', '-_.+=@%'];

/**
 * A random password the pool's policy accepts (every character class, 20 characters): the local
 * demo user's, and a local invite's temporary one, where no email carries Cognito's own.
 */
export function temporaryPassword(length = 20): string {
  const all = CLASSES.join('');
  const chars = CLASSES.map((set) => set[randomInt(set.length)] ?? '');
  while (chars.length < Math.max(length, DASHBOARD_USER_POOL.passwordPolicy.MinimumLength)) {
    chars.push(all[randomInt(all.length)] ?? '');
  }
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j] ?? '', chars[i] ?? ''];
  }
  return chars.join('');
}
