/** Background loops: one pass at a time, a wait between passes, back-off on failure. */
export {
  createBackgroundLoop,
  unrefTimers,
  type BackgroundLoop,
  type BackgroundLoopOptions,
  type LoopTimers,
} from './backgroundLoop.js';
export { backoffDelay, type BackoffPolicy } from './backoffDelay.js';
