/**
 * docs/reference/http-routes.md is what the server documents: rendered again from the
 * OpenAPI document a running gateway serves, it is the committed page byte for byte. A
 * route added or changed without `npm run docs:http` fails here.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderHttpReference, type OpenApiDocument } from '../../scripts/httpReference/render.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

describe('HTTP route reference', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(CLOUD_DIALECTS[0]!);
  });
  afterAll(async () => {
    await gw.close();
  });

  it('matches the OpenAPI document the server serves (npm run docs:http)', async () => {
    const doc = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as OpenApiDocument;
    const committed = readFileSync(
      new URL('../../docs/reference/http-routes.md', import.meta.url),
      'utf8',
    );
    const rendered = renderHttpReference(doc);
    expect(rendered).toContain('### POST /api/v1/workflows');
    expect(committed).toBe(rendered);
  });
});
