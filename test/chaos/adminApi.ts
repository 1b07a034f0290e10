/**
 * The operator side of the chaos run: admin API calls against whichever gateway answers.
 * Gateways die and PostgreSQL restarts during the run, so a call goes round the gateways
 * until one answers or the deadline passes. Only requests that are safe to repeat are
 * repeated after an unclear failure (a reset connection, a 5xx): reads, PUTs, and starts
 * with an idempotency key. Anything else is repeated only when it surely never reached a
 * gateway (connection refused).
 */

/** Whether a call may be sent again after an unclear failure. */
export type Repeat = 'idempotent' | 'only-if-unsent';

/** Admin API access through the gateways. */
export interface AdminApi {
  /** JSON body of a 2xx answer; throws with the status and problem text otherwise. */
  call<T>(
    path: string,
    init?: { method?: string; body?: unknown },
    options?: { repeat?: Repeat; deadlineMs?: number },
  ): Promise<T>;
  /** Calls that had to go to another gateway or wait. */
  readonly retries: number;
}

/** An answer that ends the call (no retry), with its HTTP status. */
class ApiRefused extends Error {
  override readonly name = 'ApiRefused';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Whether `error` is the API's definite "no" (a 4xx other than 429): trying again is pointless. */
export function isRefusal(error: unknown): boolean {
  return error instanceof ApiRefused && error.status < 500 && error.status !== 429;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function refusedConnection(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return cause?.code === 'ECONNREFUSED';
}

/** An admin client over `urls` with bearer `token`. */
export function adminApi(urls: readonly string[], token: string): AdminApi {
  let next = 0;
  let retries = 0;
  return {
    get retries() {
      return retries;
    },
    async call<T>(
      path: string,
      init: { method?: string; body?: unknown } = {},
      options: { repeat?: Repeat; deadlineMs?: number } = {},
    ): Promise<T> {
      const method = init.method ?? 'GET';
      const repeat = options.repeat ?? (method === 'GET' ? 'idempotent' : 'only-if-unsent');
      const deadline = Date.now() + (options.deadlineMs ?? 90_000);
      let lastError: unknown;
      for (let attempt = 0; Date.now() < deadline; attempt++) {
        if (attempt > 0) {
          retries++;
          await sleep(Math.min(2_000, 200 * attempt));
        }
        const base = urls[next++ % urls.length]!;
        let res: Response;
        try {
          res = await fetch(`${base}${path}`, {
            method,
            signal: AbortSignal.timeout(20_000),
            headers: {
              authorization: `Bearer ${token}`,
              ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
            },
            ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
          });
        } catch (error) {
          lastError = error;
          if (repeat === 'idempotent' || refusedConnection(error)) continue;
          throw error;
        }
        const text = await res.text();
        if (res.ok) return (text === '' ? {} : JSON.parse(text)) as T;
        lastError = new ApiRefused(
          `${method} ${path}: ${res.status} ${text.slice(0, 300)}`,
          res.status,
        );
        const transient = res.status >= 500 || res.status === 429;
        if (transient && (repeat === 'idempotent' || res.status === 503)) continue;
        throw lastError;
      }
      throw lastError instanceof Error ? lastError : new Error(`${method} ${path} timed out`);
    },
  };
}
