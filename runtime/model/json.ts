/**
 * The JSON shape of the core model, named once so that workflow state, step results and the
 * stores' JSONB columns agree on one type instead of each spelling its own record.
 */

/** A JSON object: what workflow state, step results and JSONB columns hold. */
export type JsonObject = Record<string, unknown>;
