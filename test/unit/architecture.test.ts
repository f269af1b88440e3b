import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '#test/support/gateway.ts';

/** Every project file a file imports at run time (`import type` is erased, so it does not count). */
function runtimeImports(file: string): string[] {
  const source = readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
  const found = [...source.matchAll(/^import (?!type )[^;]*?from '#(shared|functions|infra)\/([^']+)';/gms)];
  return found.map(([, folder, rest]) => `${folder}/${rest}`);
}

/** The files `entry` loads, directly or through others. */
function importGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const imported of runtimeImports(file)) visit(imported);
  };
  visit(entry);
  return seen;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(PROJECT_ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => path.join(folder, file));
}

const ADAPTERS = [
  'shared/partners/sandbox.ts',
  'shared/partners/paystack.ts',
  'shared/partners/configured.ts',
  'shared/partners/registry.ts',
  'shared/partners/delivery-reader.ts',
];

describe('the partner seam', () => {
  it.each([
    'functions/process-payment-events.ts',
    'shared/payments/credit.ts',
    'shared/transfers/settle.ts',
    'shared/ledger/ledger.ts',
  ])('%s loads no partner adapter: it sees domain events only', (entry) => {
    const loaded = importGraph(entry);
    expect(loaded.size).toBeGreaterThan(1);
    expect(ADAPTERS.filter((adapter) => loaded.has(adapter))).toEqual([]);
  });

  it("leaves a partner's words to its adapter: no other module names Paystack's events or headers", () => {
    const outside = [...sourceFiles('shared'), ...sourceFiles('functions')].filter(
      (file) => !file.startsWith('shared/partners/'),
    );
    expect(outside.length).toBeGreaterThan(20);
    for (const file of outside) {
      const source = readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
      expect(source, file).not.toMatch(
        /charge\.success|bank\.transfer\.rejected|dedicated_nuban|x-paystack-signature/,
      );
    }
  });
});

describe('the dependency direction', () => {
  it('no Lambda code (shared/, functions/) imports infra/', () => {
    for (const file of [...sourceFiles('shared'), ...sourceFiles('functions')]) {
      expect(
        runtimeImports(file).filter((imported) => imported.startsWith('infra/')),
        file,
      ).toEqual([]);
      expect(readFileSync(path.join(PROJECT_ROOT, file), 'utf8'), file).not.toMatch(
        /from '(#infra\/|aws-cdk-lib)/,
      );
    }
  });

  it("is a lint rule: Biome, with the project's own configuration, refuses an infra/ import in shared/ and functions/", () => {
    // A copy of the layout in a temporary folder, linted with the project's biome.json (less its git
    // integration): the rule itself is under test, not the current files.
    const dir = mkdtempSync(path.join(tmpdir(), 'lint-rule-'));
    try {
      const config = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'biome.json'), 'utf8'));
      delete config.vcs;
      delete config.$schema;
      writeFileSync(path.join(dir, 'biome.json'), JSON.stringify(config));
      const probe =
        "import { PaymentsStack } from '#infra/stack.ts';\n\nexport const stack = PaymentsStack;\n";
      const lint = (folder: string) => {
        mkdirSync(path.join(dir, folder), { recursive: true });
        writeFileSync(path.join(dir, folder, 'probe.ts'), probe);
        try {
          execFileSync(
            path.join(PROJECT_ROOT, 'node_modules', '.bin', 'biome'),
            ['lint', `${folder}/probe.ts`],
            {
              cwd: dir,
              stdio: 'pipe',
            },
          );
          return 'accepted';
        } catch (error) {
          return (
            String((error as { stdout?: Buffer }).stdout) + String((error as { stderr?: Buffer }).stderr)
          );
        }
      };
      expect(lint('shared')).toContain('noRestrictedImports');
      expect(lint('functions')).toContain('noRestrictedImports');
      expect(lint('infra')).toBe('accepted');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('no client a function does not use', () => {
  /** The npm packages the files of `loaded` import at run time. */
  const packagesOf = (loaded: Set<string>) =>
    new Set(
      [...loaded].flatMap((file) => {
        const source = readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
        return [...source.matchAll(/^import (?!type )[^;]*?from '(@[^/']+\/[^/']+|[^#.@'][^/']*)/gms)].map(
          ([, name]) => name ?? '',
        );
      }),
    );

  it('the partner webhook only verifies and queues: it loads the SQS client and no DynamoDB client', () => {
    const loaded = importGraph('functions/receive-partner-webhook.ts');
    expect(loaded.has('shared/aws/sqs.ts')).toBe(true);
    expect(loaded.has('shared/aws/clients.ts')).toBe(false);
    const packages = packagesOf(loaded);
    expect(packages.has('@aws-sdk/client-sqs')).toBe(true);
    expect([...packages].filter((name) => name.includes('dynamodb'))).toEqual([]);
  });
});
