/**
 * Answer a conditional GET of a signed document: a strong ETag over the signed bytes, 304
 * with no body when `If-None-Match` matches (nothing is signed on that path), else the
 * document with its Ed25519 signature.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { documentEtag, signedText } from '../../runtime/index.js';
import type { Keyring } from '../keys.js';
import { ifNoneMatchHits } from '../etag.js';

/** A document without its signature, and its ETag. */
export interface TaggedDocument {
  unsigned: Record<string, unknown>;
  etag: string;
}

/** `unsigned` with its ETag. */
export const tagged = (unsigned: Record<string, unknown>): TaggedDocument => ({
  unsigned,
  etag: documentEtag(unsigned),
});

/** 304 when `If-None-Match` matches `etag`; undefined otherwise. */
export function answerNotModified(
  request: FastifyRequest,
  reply: FastifyReply,
  etag: string,
): FastifyReply | undefined {
  if (!ifNoneMatchHits(request.headers['if-none-match'], etag)) return undefined;
  return reply.header('etag', etag).header('cache-control', 'private, no-cache').code(304).send();
}

/** Send the document signed, or 304; returns the reply or the body for the route to send. */
export function answerSigned(
  keys: Keyring,
  request: FastifyRequest,
  reply: FastifyReply,
  document: TaggedDocument,
): FastifyReply | Record<string, unknown> {
  const { unsigned, etag } = document;
  reply.header('etag', etag).header('cache-control', 'private, no-cache');
  if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send();
  return { ...unsigned, signature: keys.sign(signedText(unsigned)) };
}
