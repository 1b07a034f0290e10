/**
 * Headless Chromium for browser tests, driven by playwright-core: Debian's `chromium`
 * (installed by .ci/run), or CHROMIUM_PATH. Under CI=true a missing browser is an error —
 * the browser suite is mandatory there — elsewhere the suite is skipped with the reason.
 */
import { existsSync } from 'node:fs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The Chromium executable, if one is installed. */
export const chromiumPath: string | undefined = candidates.find(
  (p): p is string => p !== undefined && p !== '' && existsSync(p),
);

if (process.env.CI === 'true' && chromiumPath === undefined)
  throw new Error('CI=true but no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)');

/** Launch headless Chromium. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath!,
    headless: true,
    // root in a container has no user namespace for Chromium's sandbox
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

/** Where screenshots go (kept as CI artifacts). */
export function artifactDir(name: string): string {
  const dir = join(process.cwd(), 'test-results', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}
