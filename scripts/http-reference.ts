/**
 * `npm run docs:http`: write docs/reference/http-routes.md from the OpenAPI document of a
 * control plane started on an in-memory embedded database (nothing else is needed).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway, ephemeralKeyring } from '../gateway/index.js';
import { migrations } from '../migrations/index.js';
import { asCloud, migrate, openStore } from '../runtime/index.js';
import { renderHttpReference, type OpenApiDocument } from './httpReference/render.js';

const target = new URL('../docs/reference/http-routes.md', import.meta.url);
const store = asCloud(await openStore('pglite:memory'));
const wasmDir = mkdtempSync(join(tmpdir(), 'saffron-docs-'));
try {
  await migrate(store, migrations);
  const gateway = await createGateway({ store, keys: ephemeralKeyring(), wasmStorageDir: wasmDir });
  try {
    const url = await gateway.listen(0);
    const doc = (await (await fetch(`${url}/api/v1/openapi.json`)).json()) as OpenApiDocument;
    writeFileSync(target, renderHttpReference(doc));
    process.stdout.write(`wrote ${target.pathname}\n`);
  } finally {
    await gateway.close();
  }
} finally {
  await store.close();
  rmSync(wasmDir, { recursive: true, force: true });
}
