/**
 * Bounded reading and decoding of response bodies. A misbehaving or hostile upstream can
 * send an endless or compressed-to-huge body; reading it whole would exhaust the memory of
 * an edge device, so bytes are counted while streaming (after decompression) and the stream
 * is cancelled as soon as the limit is passed.
 */
import { TextDecoder } from 'node:util';

/** Default limit on the bytes of a response body: 10 MiB. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** Bytes read from a body; `complete` is false when the limit cut it short. */
export interface BodyBytes {
  bytes: Uint8Array;
  complete: boolean;
}

function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk.subarray(0, length - offset), offset);
    offset += Math.min(chunk.length, length - offset);
  }
  return bytes;
}

/**
 * True when `content-length` already announces more than `limit` bytes. Only trusted for
 * unencoded bodies: with `content-encoding` it counts compressed bytes.
 */
export function declaresMoreThan(response: Response, limit: number): boolean {
  if (response.headers.get('content-encoding') !== null) return false;
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  return Number.isFinite(declared) && declared > limit;
}

/**
 * Read at most `limit` bytes of `response`'s body. When the body is longer the stream is
 * cancelled and the first `limit` bytes are returned with `complete: false`.
 */
export async function readBodyBytes(response: Response, limit: number): Promise<BodyBytes> {
  const body = response.body;
  if (body === null) return { bytes: new Uint8Array(0), complete: true };
  // The body is typed ReadableStream<any>; fetch bodies are streams of Uint8Array.
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    chunks.push(chunk);
    total += chunk.length;
    // Leaving the loop cancels the stream, which releases the connection.
    if (total > limit) return { bytes: concat(chunks, limit), complete: false };
  }
  return { bytes: concat(chunks, total), complete: true };
}

function mediaType(contentType: string | null): { type: string; charset: string } {
  const [type = '', ...params] = (contentType ?? '').split(';');
  const charset = params
    .map((param) => param.trim().split('='))
    .find(([name]) => name?.toLowerCase() === 'charset')?.[1];
  return { type: type.trim().toLowerCase(), charset: charset?.replace(/"/g, '') ?? 'utf-8' };
}

function decoder(charset: string): TextDecoder {
  try {
    return new TextDecoder(charset);
  } catch {
    return new TextDecoder('utf-8');
  }
}

/** Body bytes as text, in the response's charset when Node knows it, else UTF-8. */
export function decodeText(bytes: Uint8Array, contentType: string | null): string {
  return decoder(mediaType(contentType).charset).decode(bytes);
}

/**
 * The body as a value: parsed JSON for `application/json` and `*+json` media types (text
 * when it does not parse), text for everything else.
 */
export function decodeBody(bytes: Uint8Array, contentType: string | null): unknown {
  const text = decodeText(bytes, contentType);
  const { type } = mediaType(contentType);
  if (type !== 'application/json' && !type.endsWith('+json')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
