/**
 * The operator dashboard: static files served by the gateway at `/dashboard` — fleet,
 * workflows with their audit timeline and live statechart, and commands. The page holds no
 * data of its own: it signs in with an API token (kept in the tab's sessionStorage) and
 * reads everything through the same `/api/v1` endpoints, with the same role checks, as any
 * other client. A strict Content-Security-Policy allows only the dashboard's own scripts and
 * styles, so text shown from the API can never run.
 *
 * The statechart is laid out in the browser with dagre (served from the installed package),
 * from the machine graph of `GET /api/v1/workflows/{id}/statechart`. The overview's trend
 * charts are drawn with uPlot, its ES module and stylesheet served from the installed
 * package too: the page loads nothing from another origin.
 *
 * The served files are a closed set looked up in a `Map`: a name such as `constructor` or
 * `__proto__` is no file (a plain object would find its prototype's members under those
 * names), and no answer ever carries a path of the server's disk.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GatewayContext } from '../context.js';
import { Problem } from '../problem.js';

/** The dashboard's files and their media types. */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['index.html', 'text/html; charset=utf-8'],
  ['app.js', 'text/javascript; charset=utf-8'],
  ['statechart.js', 'text/javascript; charset=utf-8'],
  ['charts.js', 'text/javascript; charset=utf-8'],
  ['timeline.js', 'text/javascript; charset=utf-8'],
  ['app.css', 'text/css; charset=utf-8'],
]);

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Where the asset files are: beside this module in a checkout, or the source tree from dist/. */
function assetsDir(): string {
  const here = fileURLToPath(new URL('./assets/', import.meta.url));
  return here.includes('/dist/')
    ? fileURLToPath(new URL('../../../gateway/dashboard/assets/', import.meta.url))
    : here;
}

/** A file of an installed package's `dist/` folder (packages export only their entry points). */
function packageFile(name: string, file: string): string {
  return join(
    dirname(createRequire(import.meta.url).resolve(`${name}/package.json`)),
    'dist',
    file,
  );
}

/**
 * Files served from installed packages under `/dashboard/vendor/`: package, file in its
 * `dist/`, media type. Resolved when first asked for, so the gateway starts without them.
 */
const VENDOR: ReadonlyMap<string, readonly [string, string, string]> = new Map([
  ['dagre.js', ['@dagrejs/dagre', 'dagre.min.js', 'text/javascript; charset=utf-8']],
  ['uplot.js', ['uplot', 'uPlot.esm.js', 'text/javascript; charset=utf-8']],
  ['uplot.css', ['uplot', 'uPlot.min.css', 'text/css; charset=utf-8']],
]);

/** Serve the dashboard under `/dashboard`. */
export function registerDashboard(ctx: GatewayContext): void {
  const dir = assetsDir();
  const cache = new Map<string, Buffer>();
  const load = async (file: string) => {
    let bytes = cache.get(file);
    if (!bytes) {
      bytes = await readFile(file);
      cache.set(file, bytes);
    }
    return bytes;
  };
  const headers = {
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-cache',
  };

  ctx.app.get('/dashboard', async (_request, reply) => reply.redirect('/dashboard/', 302));
  ctx.app.get('/dashboard/', async (_request, reply) =>
    reply
      .headers(headers)
      .type(ASSETS.get('index.html')!)
      .send(await load(`${dir}index.html`)),
  );
  ctx.app.get<{ Params: { file: string } }>('/dashboard/vendor/:file', async (request, reply) => {
    const vendor = VENDOR.get(request.params.file);
    if (vendor === undefined) throw new Problem(404, 'NOT_FOUND', 'no such dashboard file');
    const [name, file, type] = vendor;
    return reply
      .headers(headers)
      .type(type)
      .send(await load(packageFile(name, file)));
  });
  ctx.app.get<{ Params: { file: string } }>('/dashboard/:file', async (request, reply) => {
    const type = ASSETS.get(request.params.file);
    if (type === undefined) throw new Problem(404, 'NOT_FOUND', 'no such dashboard file');
    return reply
      .headers(headers)
      .type(type)
      .send(await load(`${dir}${request.params.file}`));
  });
}
