/**
 * The edge's rule for workflow state: a step that leaves a card number in clear in it fails.
 * The state is what the terminal keeps longest (a workflow row lives until it is cleaned up,
 * and a settled one feeds its store-and-forward record), so it is not masked — a masked
 * number would look like data a later step could use — but refused: the step fails with
 * `CARD_DATA_IN_STATE`, the workflow keeps the state it had before the step, and the error
 * names only where the number was, never the number. A workflow must carry a card as a token
 * and its last four digits.
 */
import { findClearPan, type JsonObject } from '../../runtime/index.js';
import { AgentError } from '../agent/errors.js';

/** The engine's state guard on the edge: CARD_DATA_IN_STATE for a state holding a card number. */
export function refuseCardState(state: JsonObject, stepName: string): AgentError | undefined {
  const hit = findClearPan(state, 'state');
  if (!hit) return undefined;
  return new AgentError(
    'CARD_DATA_IN_STATE',
    `step ${stepName} left what looks like a card number in clear ${hit.inKey ? 'in a key of' : 'at'} ${hit.path}; the state was not kept — carry the card as a token and its last four digits`,
    { details: { step: stepName, path: hit.path }, retryable: false },
  );
}
