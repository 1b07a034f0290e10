/**
 * Waiting for SIGINT or SIGTERM, for the commands that run until stopped (cloud serve,
 * worker, edge run, demo). The handlers go when the first signal arrives or on `dispose`.
 */

/** A wait for the first SIGINT/SIGTERM. */
export interface SignalWait {
  promise: Promise<NodeJS.Signals>;
  /** Stop listening (the promise then never settles). */
  dispose(): void;
}

/** Start listening for SIGINT/SIGTERM now. */
export function waitForSignal(): SignalWait {
  let on: (signal: NodeJS.Signals) => void = () => undefined;
  const dispose = () => {
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
  };
  const promise = new Promise<NodeJS.Signals>((resolve) => {
    on = (signal) => {
      dispose();
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
  return { promise, dispose };
}

/** The first SIGINT/SIGTERM from now on. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return waitForSignal().promise;
}
