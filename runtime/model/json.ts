/** A JSON object: what workflow state, step results and JSONB columns hold. */
export type JsonObject = Record<string, unknown>;
