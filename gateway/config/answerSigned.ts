/**
 * Answer a conditional GET of a signed document: a strong ETag over the signed bytes, 304
 * with no body when `If-None-Match` matches (nothing is signed on that path), else the
 * document with its Ed25519 signature.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { documentEtag, signedText } from '../../runtime/index.js';
import type { Keyring } from '../keys.js';
import { ifNoneMatchHits } from '../etag.js';

/** Send `unsigned` signed, or 304; returns the reply or the body for the route to send. */
export function answerSigned(
  keys: Keyring,
  request: FastifyRequest,
  reply: FastifyReply,
  unsigned: Record<string, unknown>,
): FastifyReply | Record<string, unknown> {
  const etag = documentEtag(unsigned);
  reply.header('etag', etag).header('cache-control', 'private, no-cache');
  if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send();
  return { ...unsigned, signature: keys.sign(signedText(unsigned)) };
}
