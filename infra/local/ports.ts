/**
 * The ports the fetch standard blocks ("bad ports"), which Node's own `fetch` refuses to connect to
 * (`TypeError: fetch failed`, cause `bad port`). The local stand-ins call one another with `fetch`
 * (the sandbox partner posts its webhooks to the gateway, the sandbox CLI reaches both), so
 * `npm start` refuses these ports up front rather than fail at the first payment.
 * test/integration/fetch-blocked-ports.test.ts checks the list against Node's fetch.
 */
export const FETCH_BLOCKED_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** The ports `npm start` and the CLIs that talk to it use when none is set (README, Configuration). */
export const DEFAULT_PORTS = {
  PORT: 3000,
  DYNAMODB_PORT: 8000,
  SQS_PORT: 9324,
  SANDBOX_PORT: 3100,
  COGNITO_PORT: 9229,
  PAYSTACK_STAND_IN_PORT: 4010,
} as const;

/** Reads a port setting: a whole number 1-65535 that `fetch` may connect to, or a clear error. */
export function portSetting(name: string, raw: string | undefined, fallback: number): number {
  const value = Number(raw ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > 65535)
    throw new Error(`${name} must be a port number`);
  if (FETCH_BLOCKED_PORTS.has(value)) {
    let free = value + 1;
    while (FETCH_BLOCKED_PORTS.has(free)) free++;
    throw new Error(
      `${name}=${value} is one of the ports Node's fetch refuses to connect to (the fetch standard's blocked ports), so the local stand-ins could not reach it: pick another, e.g. ${free}`,
    );
  }
  return value;
}

/**
 * `NAME=value` for each of `names` (in that order) whose port in `env` is set and not its default:
 * what a printed command repeats so that it reaches the same services.
 */
export function changedPortSettings(
  names: readonly (keyof typeof DEFAULT_PORTS)[],
  env: Record<string, string | undefined> = process.env,
): string[] {
  return names.flatMap((name) => {
    const value = portSetting(name, env[name], DEFAULT_PORTS[name]);
    return value === DEFAULT_PORTS[name] ? [] : [`${name}=${value}`];
  });
}
