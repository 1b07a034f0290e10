/**
 * The control plane's root: `GET /` sends a browser to the dashboard (302, no credentials
 * needed for the redirect itself; the dashboard asks for a token), and only when the
 * dashboard is among the server's routes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_ROUTES } from '../../gateway/routes/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const pglite = CLOUD_DIALECTS.find((d) => d.name === 'pglite')!;

describe('GET / on the cloud server', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('redirects to /dashboard/ without credentials', async () => {
    gw = await startTestGateway(pglite);
    const root = await fetch(`${gw.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/dashboard/');
    const followed = await fetch(`${gw.url}/`);
    expect(followed.status).toBe(200);
    expect(followed.url).toBe(`${gw.url}/dashboard/`);
    expect(followed.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('is not found on a server without the dashboard', async () => {
    const routes = ALL_ROUTES.filter((r) => r.name !== 'registerDashboard');
    expect(routes.length).toBe(ALL_ROUTES.length - 1);
    gw = await startTestGateway(pglite, { routes });
    const root = await fetch(`${gw.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(404);
    expect(root.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});
