/**
 * The operator dashboard in headless Chromium against a real gateway: sign-in with an API
 * token (a wrong one refused), the fleet, a workflow's live statechart with the right active
 * state that advances when the workflow does, and a command sent from a device's page.
 * Screenshots land in test-results/dashboard/.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactDir, chromiumPath, launchBrowser } from '../support/browser.js';
import { definition, ENGINE_STEPS } from '../support/engine.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const YAML = `
workflow_type: dashboard_demo
workflow_version: "1"
automate_next: true
steps:
  - { name: prepare, type: STANDARD, function: steps.mark }
  - { name: approve, type: HUMAN_IN_LOOP, function: steps.ask_human }
  - { name: finish, type: STANDARD, function: steps.mark }
`;

describe.skipIf(chromiumPath === undefined)('operator dashboard in Chromium', () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let operator: string;
  const errors: string[] = [];
  const shots = artifactDir('dashboard');

  beforeAll(async () => {
    gw = await startTestGateway(CLOUD_DIALECTS[0]!, { stepsRoot: ENGINE_STEPS });
    gw.gateway.context.runtime.registry.register(await definition(YAML));
    operator = await gw.token('operator');
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  const start = async () => {
    const response = await gw.asUser(operator, '/api/v1/workflows', {
      method: 'POST',
      body: JSON.stringify({ workflow_type: 'dashboard_demo', data: { amount: 12 } }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; status: string };
  };

  it('serves the page with a strict Content-Security-Policy', async () => {
    const response = await fetch(`${gw.url}/dashboard/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect((await fetch(`${gw.url}/dashboard/..%2Fserver.ts`)).status).toBe(404);
    expect((await fetch(`${gw.url}/dashboard/secrets.json`)).status).toBe(404);
  });

  it('refuses a wrong token and signs in with a good one', async () => {
    await gw.insertDevice('till-7');
    await page.goto(`${gw.url}/dashboard/`);
    await page.fill('#token', 'saf_not_a_real_token_000000000000');
    await page.click('#login');
    await page.waitForSelector('#login-error:has-text("not valid")');
    await page.fill('#token', operator);
    await page.click('#login');
    await page.waitForSelector('#devices tr[data-device="till-7"]');
    await page.screenshot({ path: join(shots, 'fleet.png'), fullPage: true });
  });

  it('shows the live statechart with the active state, and follows the workflow', async () => {
    const wf = await start();
    expect(wf.status).toBe('WAITING_HUMAN_INPUT');
    await page.goto(`${gw.url}/dashboard/#/workflows`);
    await page.click(`#workflows tr[data-workflow="${wf.id}"]`);
    const active = page.locator('#statechart g.node.active');
    await expect.poll(() => active.getAttribute('data-state')).toBe('approve');
    expect(await active.locator('text.sub').textContent()).toContain('waitingHuman');
    expect(await page.locator('#statechart g.node.visited[data-state="prepare"]').count()).toBe(1);
    // every state of the machine is drawn, with its transitions
    const nodes = await page.locator('#statechart g.node').all();
    const states = await Promise.all(nodes.map((n) => n.getAttribute('data-state')));
    expect(states).toEqual(
      expect.arrayContaining(['prepare', 'approve', 'finish', 'completed', 'failed', 'cancelled']),
    );
    expect(await page.locator('#statechart g.edge').count()).toBeGreaterThanOrEqual(4);
    await page.screenshot({ path: join(shots, 'statechart-waiting.png'), fullPage: true });

    const resumed = await gw.asUser(operator, `/api/v1/workflows/${wf.id}/resume`, {
      method: 'POST',
      body: JSON.stringify({ input: { approved: true, by: 'dashboard-test' } }),
    });
    expect(resumed.status).toBe(200);
    await page.waitForSelector('#statechart g.node.active[data-state="completed"]');
    await page.waitForSelector('#workflow-status:has-text("COMPLETED")');
    await page.waitForSelector('#audit li:has-text("WORKFLOW_RESUMED")');
    await page.screenshot({ path: join(shots, 'statechart-completed.png'), fullPage: true });
  });

  it('sends a command from a device page', async () => {
    await page.goto(`${gw.url}/dashboard/#/fleet`);
    await page.click('#devices tr[data-device="till-7"]');
    await page.selectOption('#command-type', 'DIAGNOSTIC');
    await page.fill('#command-payload', '{"checks": ["disk"]}');
    await page.click('#send-command');
    await page.waitForSelector('#command-message:has-text("created")');
    await page.waitForSelector('#device-commands tr[data-command]');
    const list = (await (await gw.asUser(operator, '/api/v1/devices/till-7/commands')).json()) as {
      commands: { command_type: string; payload: unknown }[];
    };
    expect(list.commands).toMatchObject([
      { command_type: 'DIAGNOSTIC', payload: { checks: ['disk'] } },
    ]);
    // a bad payload is refused with the API's reason, and nothing is created
    await page.fill('#command-payload', '{"bogus": 1}');
    await page.click('#send-command');
    await page.waitForSelector('#command-message:has-text("Refused")');
    const after = (await (await gw.asUser(operator, '/api/v1/devices/till-7/commands')).json()) as {
      commands: unknown[];
    };
    expect(after.commands).toHaveLength(1);
    await page.screenshot({ path: join(shots, 'device.png'), fullPage: true });
    // the only failed loads are the ones provoked: the wrong token and the refused command
    expect(errors.filter((e) => !/status of (401|422)/.test(e))).toEqual([]);
  });

  it('shows broadcasts with their rollout progress on the commands page', async () => {
    const created = await gw.asUser(operator, '/api/v1/command-broadcasts', {
      method: 'POST',
      body: JSON.stringify({
        command: { command_type: 'DIAGNOSTIC', payload: {} },
        target: { device_ids: ['till-7'] },
        rollout: { phases: [100] },
      }),
    });
    expect(created.status).toBe(201);
    const { broadcast_id: id } = (await created.json()) as { broadcast_id: string };
    await page.goto(`${gw.url}/dashboard/#/commands`);
    const row = page.locator(`#broadcasts tr[data-broadcast="${id}"]`);
    await row.waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe('DIAGNOSTIC');
    expect(await row.locator('td').nth(3).textContent()).toBe('1/1');
    // the bar shows settled devices out of the targeted one
    expect(await row.locator('td.progress').textContent()).toMatch(/[01]\/1$/);
    expect(await row.locator('progress').count()).toBe(1);
    await page.screenshot({ path: join(shots, 'commands.png'), fullPage: true });
    expect(errors.filter((e) => !/status of (401|422)/.test(e))).toEqual([]);
  });
});
