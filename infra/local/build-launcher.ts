import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  dynamoDbLocalClassPath,
  dynamoDbLocalJar,
  launcherDir,
  launcherSource,
  launcherSourceHashFile,
} from '#infra/local/dynamodb.ts';

/**
 * `npm run build:launcher`: compiles LoopbackDynamoDb.java for Java 17 into infra/local/launcher/
 * (needs a JDK 17+), and records the SHA-256 of the source it was built from, which a unit test
 * compares with the source, so a changed launcher is never run from a stale class file.
 */

const javac = spawnSync(
  'javac',
  ['--release', '17', '-cp', dynamoDbLocalClassPath(dynamoDbLocalJar()), '-d', launcherDir, launcherSource],
  { stdio: 'inherit' },
);
if (javac.error || javac.status !== 0) {
  console.error('javac failed: building the launcher needs a JDK 17 or newer (running it needs only a JRE).');
  process.exit(1);
}
const sourceHash = createHash('sha256').update(readFileSync(launcherSource)).digest('hex');
writeFileSync(launcherSourceHashFile, `${sourceHash}\n`);
console.log(`Built ${path.relative(process.cwd(), launcherDir)}/LoopbackDynamoDb.class`);
