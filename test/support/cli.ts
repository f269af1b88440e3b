import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '#test/support/gateway.ts';

const run = promisify(execFile);

/**
 * Runs an operator CLI (`infra/cli/<name>.ts`) as `npm run <name> -- …` would, in the environment of
 * an operator's shell pointed at the test stack; resolves with its exit code and output.
 */
export async function runCli(
  name: string,
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', `infra/cli/${name}.ts`, ...args],
      {
        cwd: PROJECT_ROOT,
        // Nothing set by the test run's own processes beyond the stack's addresses.
        env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: undefined, ...env },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
