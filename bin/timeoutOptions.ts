/**
 * The HTTP timeouts of `saffron cloud serve`, from flags or the environment, in seconds (a
 * flag wins over its variable). Each left out keeps the gateway's default (gateway/server.ts):
 * the whole request 120 s, its headers 30 s, a silent socket 60 s, an idle kept-alive
 * connection 72 s.
 */
import type { Command } from 'commander';
import { DEFAULT_TIMEOUTS, type ServerTimeouts } from '../gateway/index.js';
import { CliExit } from './io.js';

/** The timeout flags as commander parses them. */
export interface TimeoutFlags {
  requestTimeout?: string;
  headersTimeout?: string;
  idleTimeout?: string;
  keepAliveTimeout?: string;
}

/** Each timeout: its flag (camel-cased as parsed), variable, and the gateway option it sets. */
const TIMEOUTS = [
  { flag: 'requestTimeout', variable: 'SAFFRON_HTTP_REQUEST_TIMEOUT', option: 'requestMs' },
  { flag: 'headersTimeout', variable: 'SAFFRON_HTTP_HEADERS_TIMEOUT', option: 'headersMs' },
  { flag: 'idleTimeout', variable: 'SAFFRON_HTTP_IDLE_TIMEOUT', option: 'idleMs' },
  { flag: 'keepAliveTimeout', variable: 'SAFFRON_HTTP_KEEP_ALIVE_TIMEOUT', option: 'keepAliveMs' },
] as const satisfies readonly {
  flag: keyof TimeoutFlags;
  variable: string;
  option: keyof ServerTimeouts;
}[];

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Declare the timeout flags on `command`. */
export function timeoutOptions(command: Command): Command {
  return command
    .option(
      '--request-timeout <seconds>',
      'longest a request may take to arrive, headers and body (default: SAFFRON_HTTP_REQUEST_TIMEOUT, else 120)',
    )
    .option(
      '--headers-timeout <seconds>',
      'longest a request’s headers may take (default: SAFFRON_HTTP_HEADERS_TIMEOUT, else 30)',
    )
    .option(
      '--idle-timeout <seconds>',
      'close a connection silent this long (default: SAFFRON_HTTP_IDLE_TIMEOUT, else 60; device sockets exempt)',
    )
    .option(
      '--keep-alive-timeout <seconds>',
      'close a kept-alive connection idle this long between requests (default: SAFFRON_HTTP_KEEP_ALIVE_TIMEOUT, else 72)',
    );
}

/** The gateway timeouts `flags` and `env` give; a value that is not a positive number exits 2. */
export function serverTimeouts(
  flags: TimeoutFlags,
  env: Readonly<Record<string, string | undefined>>,
): ServerTimeouts {
  const timeouts: ServerTimeouts = {};
  for (const { flag, variable, option } of TIMEOUTS) {
    const given = flags[flag] ?? env[variable];
    if (given === undefined) continue;
    const seconds = Number(given);
    if (given.trim() === '' || !Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400)
      throw new CliExit(
        2,
        `${flags[flag] !== undefined ? `--${kebab(flag)}` : variable} must be a number of seconds from 0.001 to 86400, got '${given}'`,
      );
    timeouts[option] = Math.max(1, Math.round(seconds * 1000));
  }
  const headersMs = timeouts.headersMs ?? DEFAULT_TIMEOUTS.headersMs;
  if (headersMs > (timeouts.requestMs ?? DEFAULT_TIMEOUTS.requestMs))
    throw new CliExit(2, 'the headers timeout must not exceed the request timeout');
  return timeouts;
}
