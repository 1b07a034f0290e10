/**
 * The `@saffron-dev/saffron` package: the engine core (runtime) and the actors that run
 * workflows, for embedding the engine in another Node service.
 */
export * from './runtime/index.js';
export * from './actors/index.js';
