import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpConfig, HttpStep } from '../../runtime/definition/index.js';
import {
  attemptHttpStep,
  DestinationPolicy,
  HttpStepError,
  type HttpAttemptOptions,
  type HttpAttemptResult,
} from '../../runtime/http/index.js';
import { SaffronError } from '../../runtime/errors.js';
import { mapSecrets } from '../../runtime/template/index.js';
import { closedPort, sendJson, startServer, type TestServer } from './server.js';

const TOKEN = 'tok_live_9f8e7d6c5b4a';

// The fake upstreams listen on loopback: allowed here as the operator of a test bench would.
const LOOPBACK = new DestinationPolicy({ allowedPrivateNetworks: ['loopback'] });

function attempt(
  step: HttpStep,
  scope: Parameters<typeof attemptHttpStep>[1],
  options: HttpAttemptOptions = {},
): Promise<HttpAttemptResult> {
  return attemptHttpStep(step, scope, { destinations: LOOPBACK, ...options });
}

function httpStep(config: Partial<HttpConfig>, extra: Partial<HttpStep> = {}): HttpStep {
  return {
    name: 'call_acquirer',
    type: 'HTTP',
    output_key: 'acquirer',
    http_config: {
      method: 'GET',
      url: '{{ base }}/json',
      timeout: 30,
      retry_policy: { max_attempts: 1, delay_seconds: 5 },
      ...config,
    },
    ...extra,
  };
}

function success(result: HttpAttemptResult) {
  if (!result.ok)
    throw new Error(`expected success, got ${result.error.code}: ${result.error.message}`);
  return result;
}

function failure(result: HttpAttemptResult) {
  if (result.ok) throw new Error(`expected failure, got status ${result.statusCode}`);
  expect(result.error).toBeInstanceOf(HttpStepError);
  expect(result.error).toBeInstanceOf(SaffronError);
  expect(result.error.name).toBe('HttpStepError');
  expect(result.retryable).toBe(result.error.retryable);
  return result;
}

/** Everything an error would show in a log: message, stack, details, and its causes. */
function errorText(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 10; depth++) {
    parts.push(String(current), current.stack ?? '', JSON.stringify(current));
    if (current instanceof SaffronError) parts.push(JSON.stringify(current.details));
    current = current.cause;
  }
  return parts.join('\n');
}

let server: TestServer;
let state: Record<string, unknown>;

beforeAll(async () => {
  server = await startServer({
    '/echo': (request, res) => sendJson(res, 200, request),
    '/json': (_request, res) =>
      res
        .writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'X-Custom-Header': 'v1',
        })
        .end('{"approved":true,"code":"00"}'),
    '/problem': (_request, res) =>
      res.writeHead(422, { 'content-type': 'application/problem+json' }).end('{"title":"bad"}'),
    '/broken-json': (_request, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"approved":'),
    '/text': (_request, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('OK 00'),
    '/decline': (_request, res) => sendJson(res, 402, { approved: false, code: '51' }),
    '/unavailable': (_request, res) =>
      res.writeHead(503, { 'content-type': 'text/plain' }).end('acquirer maintenance'),
    '/long-error': (_request, res) => res.writeHead(500).end('x'.repeat(100_000)),
    '/echo-500': (request, res) =>
      res
        .writeHead(500, { 'content-type': 'text/plain' })
        .end(
          `upstream failed for ${request.method} ${request.url} auth=${request.headers.authorization}`,
        ),
    '/slow': (_request, res, later) => later(3_000, () => sendJson(res, 200, { late: true })),
    '/redirect': (_request, res) => res.writeHead(302, { location: '/echo' }).end(),
    '/big': (_request, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a'.repeat(1500));
      res.end('b'.repeat(1500));
    },
    '/huge': (_request, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(1024 * 1024, 120);
      for (let i = 0; i < 10; i++) res.write(chunk);
      res.end('!');
    },
  });
  state = { base: server.origin, merchant: 'm-42', amount: 1250, card: { last4: '4242' } };
});

afterAll(async () => {
  await server.close();
});

describe('attemptHttpStep: request rendering', () => {
  it('renders url, headers, query params and body from state, context and secrets', async () => {
    const step = httpStep({
      method: 'POST',
      url: '{{ base }}/echo?source=edge',
      headers: {
        Authorization: 'Bearer {{ secrets.API_TOKEN }}',
        'X-Workflow-Id': '{{ context.workflowId }}',
        'X-Merchant': '{{ state.merchant }}',
      },
      query_params: {
        merchant: '{{ merchant }}',
        amount: '{{ amount }}',
        tags: ['contactless', 'emv'],
        flag: true,
        missing: null,
      },
      body: {
        amount: '{{ state.amount }}',
        card: { last4: '{{ card.last4 }}' },
        note: 'm={{ merchant }}',
      },
    });
    const result = success(
      await attempt(
        step,
        { state, context: { workflowId: 'wf-1' } },
        { secrets: mapSecrets({ API_TOKEN: { value: TOKEN, hosts: ['127.0.0.1'] } }) },
      ),
    );
    const received = server.received.at(-1)!;
    expect(received.method).toBe('POST');
    expect(received.url).toBe(
      '/echo?source=edge&merchant=m-42&amount=1250&tags=contactless&tags=emv&flag=true',
    );
    expect(received.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(received.headers['x-workflow-id']).toBe('wf-1');
    expect(received.headers['x-merchant']).toBe('m-42');
    expect(received.headers['content-type']).toBe('application/json');
    expect(JSON.parse(received.body)).toEqual({
      amount: 1250,
      card: { last4: '4242' },
      note: 'm=m-42',
    });
    expect(result.statusCode).toBe(200);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('keeps a content-type set by the step and sends no body with GET', async () => {
    const step = httpStep({
      method: 'GET',
      url: '{{ base }}/echo',
      headers: { 'Content-Type': 'application/vnd.acquirer+json' },
      body: { ignored: true },
    });
    success(await attempt(step, { state }));
    const received = server.received.at(-1)!;
    expect(received.method).toBe('GET');
    expect(received.body).toBe('');
    expect(received.headers['content-type']).toBe('application/vnd.acquirer+json');

    const put = httpStep({
      method: 'PUT',
      url: '{{ base }}/echo',
      headers: { 'content-type': 'application/vnd.acquirer+json' },
      body: { a: 1 },
    });
    success(await attempt(put, { state }));
    expect(server.received.at(-1)!.headers['content-type']).toBe('application/vnd.acquirer+json');
    expect(server.received.at(-1)!.body).toBe('{"a":1}');
  });

  it('fails with HTTP_TEMPLATE, naming the key path, when a state key is missing', async () => {
    const before = server.received.length;
    const step = httpStep({ headers: { 'X-Terminal': '{{ state.terminal.id }}' } });
    const result = failure(await attempt(step, { state }));
    expect(result.error.code).toBe('HTTP_TEMPLATE');
    expect(result.retryable).toBe(false);
    expect(result.error.message).toContain('state.terminal.id');
    expect(result.error.message).toContain('http_config.headers');
    expect(server.received.length).toBe(before);
  });

  it('fails with HTTP_TEMPLATE when a secret is not set', async () => {
    const step = httpStep({ headers: { Authorization: 'Bearer {{ secrets.MISSING }}' } });
    const result = failure(await attempt(step, { state }, { secrets: mapSecrets({}) }));
    expect(result.error.code).toBe('HTTP_TEMPLATE');
    expect(result.error.message).toContain('MISSING');
  });

  it('fails with HTTP_INVALID_REQUEST for a header value that cannot be sent, without quoting it', async () => {
    const step = httpStep({ headers: { 'X-Note': '{{ note }}' } });
    const result = failure(await attempt(step, { state: { ...state, note: 'a\r\nInjected: 1' } }));
    expect(result.error.code).toBe('HTTP_INVALID_REQUEST');
    expect(result.retryable).toBe(false);
    expect(errorText(result.error)).not.toContain('Injected');
  });
});

describe('attemptHttpStep: URLs', () => {
  const invalid = [
    ['an unsupported scheme', 'ftp://127.0.0.1/file'],
    ['a file URL', 'file:///etc/passwd'],
    ['a relative URL', '/payments'],
    ['text that is not a URL', 'not a url'],
    ['credentials in the URL', 'http://user:pass@127.0.0.1/'],
  ] as const;

  for (const [what, url] of invalid) {
    it(`rejects ${what} with HTTP_INVALID_URL, not retryable`, async () => {
      const result = failure(await attempt(httpStep({ url }), { state }));
      expect(result.error.code).toBe('HTTP_INVALID_URL');
      expect(result.retryable).toBe(false);
    });
  }

  it('rejects a template that renders to a non-string', async () => {
    const result = failure(await attempt(httpStep({ url: '{{ amount }}' }), { state }));
    expect(result.error.code).toBe('HTTP_INVALID_URL');
  });

  it('does not quote a secret from an invalid URL', async () => {
    const step = httpStep({ url: 'hxxp://{{ secrets.API_TOKEN }} broken' });
    const result = failure(
      await attempt(
        step,
        { state },
        { secrets: mapSecrets({ API_TOKEN: { value: TOKEN, hosts: ['127.0.0.1'] } }) },
      ),
    );
    expect(result.error.code).toBe('HTTP_INVALID_URL');
    expect(errorText(result.error)).not.toContain(TOKEN);
    expect(result.error.message).toContain('[REDACTED]');
  });
});

describe('attemptHttpStep: responses', () => {
  it('parses JSON bodies and lower-cases header names', async () => {
    const result = success(await attempt(httpStep({ url: '{{ base }}/json' }), { state }));
    expect(result.output.status_code).toBe(200);
    expect(result.output.body).toEqual({ approved: true, code: '00' });
    const headers = result.output.headers as Record<string, string>;
    expect(headers['x-custom-header']).toBe('v1');
    expect(headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Object.keys(headers).every((name) => name === name.toLowerCase())).toBe(true);
  });

  it('parses +json media types and falls back to text for JSON that does not parse', async () => {
    const problem = success(await attempt(httpStep({ url: '{{ base }}/problem' }), { state }));
    expect(problem.output.body).toEqual({ title: 'bad' });
    const broken = success(await attempt(httpStep({ url: '{{ base }}/broken-json' }), { state }));
    expect(broken.output.body).toBe('{"approved":');
  });

  it('keeps text bodies as text', async () => {
    const result = success(await attempt(httpStep({ url: '{{ base }}/text' }), { state }));
    expect(result.output.body).toBe('OK 00');
  });

  it('keeps only the fields named in includes, ignoring unknown names', async () => {
    const both = success(
      await attempt(httpStep({}, { includes: ['body', 'status_code'] }), { state }),
    );
    expect(both.output).toEqual({ status_code: 200, body: { approved: true, code: '00' } });
    const headersOnly = success(
      await attempt(httpStep({}, { includes: ['headers', 'latency'] }), { state }),
    );
    expect(Object.keys(headersOnly.output)).toEqual(['headers']);
  });

  it('treats a 4xx decline as a response, not an error', async () => {
    const result = success(await attempt(httpStep({ url: '{{ base }}/decline' }), { state }));
    expect(result.statusCode).toBe(402);
    expect(result.output).toMatchObject({
      status_code: 402,
      body: { approved: false, code: '51' },
    });
  });

  it('does not follow redirects: the 3xx and its location are the response', async () => {
    const before = server.received.length;
    const result = success(await attempt(httpStep({ url: '{{ base }}/redirect' }), { state }));
    expect(result.statusCode).toBe(302);
    expect((result.output.headers as Record<string, string>).location).toBe('/echo');
    expect(server.received.length).toBe(before + 1);
  });

  it('returns a retryable HTTP_SERVER_ERROR with the status and a body preview for a 5xx', async () => {
    const result = failure(await attempt(httpStep({ url: '{{ base }}/unavailable' }), { state }));
    expect(result.error.code).toBe('HTTP_SERVER_ERROR');
    expect(result.retryable).toBe(true);
    expect(result.error.details).toEqual({
      status_code: 503,
      body_preview: 'acquirer maintenance',
    });
    expect(result.error.message).toContain('503');
  });

  it('truncates the preview of a long 5xx body', async () => {
    const result = failure(await attempt(httpStep({ url: '{{ base }}/long-error' }), { state }));
    const preview = result.error.details.body_preview as string;
    expect(preview.length).toBeLessThanOrEqual(513);
    expect(preview.endsWith('…')).toBe(true);
  });

  it('fails with HTTP_RESPONSE_TOO_LARGE past the limit', async () => {
    const small = failure(
      await attempt(httpStep({ url: '{{ base }}/big' }), { state }, { maxResponseBytes: 2000 }),
    );
    expect(small.error.code).toBe('HTTP_RESPONSE_TOO_LARGE');
    expect(small.retryable).toBe(false);
    const declared = failure(
      await attempt(httpStep({ url: '{{ base }}/json' }), { state }, { maxResponseBytes: 10 }),
    );
    expect(declared.error.code).toBe('HTTP_RESPONSE_TOO_LARGE');
    const fits = success(
      await attempt(httpStep({ url: '{{ base }}/big' }), { state }, { maxResponseBytes: 3000 }),
    );
    expect((fits.output.body as string).length).toBe(3000);
  });

  it('limits bodies to 10 MiB by default', async () => {
    const result = failure(await attempt(httpStep({ url: '{{ base }}/huge' }), { state }));
    expect(result.error.code).toBe('HTTP_RESPONSE_TOO_LARGE');
  });
});

describe('attemptHttpStep: transport failures', () => {
  it('times out after http_config.timeout seconds with a retryable HTTP_TIMEOUT', async () => {
    const result = failure(
      await attempt(httpStep({ url: '{{ base }}/slow', timeout: 1 }), { state }),
    );
    expect(result.error.code).toBe('HTTP_TIMEOUT');
    expect(result.retryable).toBe(true);
    expect(result.durationMs).toBeGreaterThanOrEqual(900);
    expect(result.durationMs).toBeLessThan(2_900);
  });

  it('reports a caller abort as HTTP_ABORTED', async () => {
    const controller = new AbortController();
    const pending = attempt(
      httpStep({ url: '{{ base }}/slow' }),
      { state },
      {
        signal: controller.signal,
      },
    );
    setTimeout(() => controller.abort(), 100);
    const result = failure(await pending);
    expect(result.error.code).toBe('HTTP_ABORTED');
  });

  it('reports a closed port as a retryable HTTP_UNREACHABLE', async () => {
    const port = await closedPort();
    const result = failure(
      await attempt(httpStep({ url: `http://127.0.0.1:${port}/auth` }), { state }),
    );
    expect(result.error.code).toBe('HTTP_UNREACHABLE');
    expect(result.retryable).toBe(true);
    expect(result.error.details).toEqual({ error_code: 'ECONNREFUSED' });
  });

  it('uses an injected fetch', async () => {
    const calls: string[] = [];
    const fakeFetch: typeof fetch = (input) => {
      calls.push(input instanceof URL ? input.href : JSON.stringify(input));
      return Promise.reject(new TypeError('fetch failed', { cause: new Error('socket hang up') }));
    };
    const result = failure(
      await attempt(
        httpStep({ url: 'https://acquirer.example/auth' }),
        { state },
        {
          fetch: fakeFetch,
        },
      ),
    );
    expect(calls).toEqual(['https://acquirer.example/auth']);
    expect(result.error.code).toBe('HTTP_UNREACHABLE');
    expect(result.error.message).toContain('socket hang up');
  });
});

describe('attemptHttpStep: secrets', () => {
  const secrets = mapSecrets({ API_TOKEN: { value: TOKEN, hosts: ['127.0.0.1'] } });

  it('never shows a secret in a 5xx error, even when the server echoes the request', async () => {
    const step = httpStep({
      method: 'POST',
      url: '{{ base }}/echo-500?key={{ secrets.API_TOKEN }}',
      headers: { Authorization: 'Bearer {{ secrets.API_TOKEN }}' },
      body: { token: '{{ secrets.API_TOKEN }}' },
    });
    const result = failure(await attempt(step, { state }, { secrets }));
    // The server did receive the secret, so the redaction below is what keeps it out.
    expect(server.received.at(-1)!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(result.error.code).toBe('HTTP_SERVER_ERROR');
    expect(errorText(result.error)).not.toContain(TOKEN);
    expect(result.error.details.body_preview).toContain('auth=Bearer [REDACTED]');
    expect(result.error.details.body_preview).toContain('key=[REDACTED]');
  });

  it('never stores a secret echoed back in a response', async () => {
    const step = httpStep({
      method: 'POST',
      url: '{{ base }}/echo',
      headers: { Authorization: 'Bearer {{ secrets.API_TOKEN }}' },
      body: { token: '{{ secrets.API_TOKEN }}' },
    });
    const result = success(await attempt(step, { state }, { secrets }));
    expect(JSON.stringify(result.output)).not.toContain(TOKEN);
    const echoed = result.output.body as { headers: Record<string, string>; body: string };
    expect(echoed.headers.authorization).toBe('Bearer [REDACTED]');
    expect(echoed.body).toBe('{"token":"[REDACTED]"}');
  });

  it('never shows a secret when the host is unreachable', async () => {
    const port = await closedPort();
    const step = httpStep({ url: `http://127.0.0.1:${port}/{{ secrets.API_TOKEN }}` });
    const result = failure(await attempt(step, { state }, { secrets }));
    expect(result.error.code).toBe('HTTP_UNREACHABLE');
    expect(errorText(result.error)).not.toContain(TOKEN);
  });
});
