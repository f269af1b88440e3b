import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildOpenApiDocument } from '#infra/openapi/document.ts';

/** `npm run openapi [-- --out file] [--base-url url]`: writes the generated document (never hand-edited). */
const { values } = parseArgs({
  options: { out: { type: 'string', default: 'cdk.out/openapi.json' }, 'base-url': { type: 'string' } },
});
const out = path.resolve(values.out ?? 'cdk.out/openapi.json');
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(buildOpenApiDocument(values['base-url']), null, 2)}\n`);
console.log(`OpenAPI document written to ${path.relative(process.cwd(), out)}`);
