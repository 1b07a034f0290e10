/**
 * HTTP steps: one attempt of an outbound call — render the templated request, send it with
 * a timeout, read a bounded response and classify failures as retryable or not.
 *
 * The engine owns retries (`retry_policy`), durable delays and storing `output` at
 * `state[output_key]`; this module owns everything that touches the network, so secret
 * redaction and response limits are enforced in one place.
 */
export { attemptHttpStep, type HttpAttemptOptions, type HttpAttemptResult } from './attempt.js';
export { MAX_RESPONSE_BYTES } from './body.js';
export { HTTP_STEP_ERROR_CODES, HttpStepError, type HttpStepErrorCode } from './errors.js';
export { REDACTED } from './redact.js';
export { HTTP_RESPONSE_FIELDS } from './response.js';
export {
  ALLOW_PRIVATE_ENV,
  destinationOptionsFromEnv,
  DestinationPolicy,
  DestinationRefusedError,
  type DestinationPolicyOptions,
} from './destinationPolicy.js';
export { guardedFetch, type OutboundFetch, type OutboundInit } from './guardedFetch.js';
export {
  parsePrivateNetworkList,
  PRIVATE_NETWORK_GROUPS,
  privateNetworkOf,
  type PrivateNetworkGroup,
} from './privateNetworks.js';
export { checkSecretDestinations, hostPatternAllows } from './secretDestinations.js';
export { refusalIn } from './transportError.js';
