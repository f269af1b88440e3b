import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { launcherDir, launcherSource, launcherSourceHashFile } from '#infra/local/dynamodb.ts';

/**
 * DynamoDB Local runs through our launcher (127.0.0.1 only; it ends with the process that started
 * it), committed compiled so that a JRE runs it too. What it does is tested where it runs (the
 * local-services and crash-durability tests); this checks that the class file is the source's.
 */
describe('the committed DynamoDB Local launcher', () => {
  it('was built from the current LoopbackDynamoDb.java (after a change: npm run build:launcher)', () => {
    const sourceHash = createHash('sha256').update(readFileSync(launcherSource)).digest('hex');
    expect(readFileSync(launcherSourceHashFile, 'utf8').trim()).toBe(sourceHash);
  });

  it('is a class file for Java 17 (major version 61), which every Java the README allows runs', () => {
    const bytes = readFileSync(path.join(launcherDir, 'LoopbackDynamoDb.class'));
    expect(bytes.readUInt32BE(0)).toBe(0xcafebabe);
    expect(bytes.readUInt16BE(6)).toBe(61);
  });
});
