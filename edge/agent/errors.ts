/**
 * Why the agent refused or could not do something. The codes reach the cloud in command
 * acks (`result.code`) and the POS in problem+json answers (`code`), so each names one
 * situation an operator or a POS developer can act on.
 */
import { SaffronError } from '../../runtime/index.js';

/** Every code an {@link AgentError} can carry. */
export const AGENT_ERROR_CODES = [
  'WORKFLOW_DEFINITION_INVALID',
  'WORKFLOW_TYPE_MISMATCH',
  'WORKFLOW_HASH_MISMATCH',
  'WORKFLOW_TYPE_UNKNOWN',
  'RESERVED_DATA_KEY',
  'CARD_DATA_IN_CLEAR',
  'CARD_DATA_IN_STATE',
  'IDEMPOTENCY_CONFLICT',
  'AGENT_NOT_RUNNING',
  'AGENT_START_FAILED',
] as const;
/** One of {@link AGENT_ERROR_CODES}. */
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

/**
 * A refusal or failure of the agent.
 *
 * - `WORKFLOW_DEFINITION_INVALID`: a hot-deployed YAML does not load (`details.issues` lists
 *   `{path, line, column, message, code}`).
 * - `WORKFLOW_TYPE_MISMATCH`: the YAML's `workflow_type` is not the one the command names.
 * - `WORKFLOW_HASH_MISMATCH`: the definition's hash is not the `definition_hash` sent with it.
 * - `WORKFLOW_TYPE_UNKNOWN`: no definition of that type is loaded.
 * - `RESERVED_DATA_KEY`: workflow data sets a member the agent fills itself (`edge`).
 * - `CARD_DATA_IN_CLEAR`: workflow data holds what looks like a card number (only its path
 *   is named).
 * - `CARD_DATA_IN_STATE`: a step left what looks like a card number in the workflow state;
 *   the step fails and the state it left is not kept (only its path is named).
 * - `IDEMPOTENCY_CONFLICT`: the idempotency key started a workflow of another type.
 * - `AGENT_NOT_RUNNING`: the agent is not started, or is stopping.
 * - `AGENT_START_FAILED`: a component could not start (see `cause`).
 */
export class AgentError extends SaffronError {
  override readonly name = 'AgentError';
  declare readonly code: AgentErrorCode;

  constructor(
    code: AgentErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown>; retryable?: boolean } = {},
  ) {
    super(code, message, options);
  }
}
