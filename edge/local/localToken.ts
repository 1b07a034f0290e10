/**
 * The bearer token of the local API. The POS application and the agent share it through a
 * file only their user can read: when the file is missing the agent creates it with a fresh
 * random token (256 bits) and mode 0600, so a terminal is never left with an open local API
 * or a default password. A file others can read is used but reported, so an installer sees it.
 *
 * Tokens are compared in constant time over their SHA-256 digests (equal length whatever was
 * sent), so response timing says nothing about how much of a guess was right.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { SaffronError } from '../../runtime/index.js';

/** The token and what loading it found. */
export interface LocalToken {
  token: string;
  /** True when the file was missing and has just been written. */
  created: boolean;
  /** True when group or others may read the file. */
  exposed: boolean;
}

/** Shortest token accepted from a file (characters). */
const MIN_TOKEN_CHARS = 16;

/** Read the token in `file`, creating the file with a random token (mode 0600) when missing. */
export function loadLocalToken(file: string): LocalToken {
  let created = false;
  try {
    writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    created = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new SaffronError(
        'LOCAL_TOKEN_UNAVAILABLE',
        `cannot create the local API token file ${file}`,
        {
          cause: error,
        },
      );
  }
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new SaffronError(
      'LOCAL_TOKEN_UNAVAILABLE',
      `cannot read the local API token file ${file}`,
      {
        cause: error,
      },
    );
  }
  if (token.length < MIN_TOKEN_CHARS || /\s/.test(token))
    throw new SaffronError(
      'LOCAL_TOKEN_INVALID',
      `the local API token in ${file} must be one word of at least ${MIN_TOKEN_CHARS} characters`,
    );
  const exposed = (statSync(file).mode & 0o077) !== 0;
  return { token, created, exposed };
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The last token's digest: an agent checks every request against the same token. */
let expected: { token: string; digest: Buffer } | undefined;

const tokenDigest = (token: string) =>
  expected?.token === token
    ? expected.digest
    : (expected = { token, digest: digest(token) }).digest;

/** Whether the `Authorization` header `header` carries `Bearer <token>` (constant time). */
export function bearerMatches(token: string, header: string | undefined): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  const offered = match?.[1] ?? '';
  // always compare, also when nothing was offered, so timing does not tell the cases apart
  const same = timingSafeEqual(tokenDigest(token), digest(offered));
  return same && offered.length > 0;
}
