/**
 * A timer wheel for a check every member of a large set needs once per period: the members
 * are dealt round-robin into slots, and one shared timer visits one slot per step, so each
 * member is visited once per period and no step does more than its share of the work.
 *
 * The device hub's heartbeat check is the user: one pass over every session at the end of
 * each period sent 15,000 heartbeats in one turn of the event loop, and the gateway's event
 * loop stood still for 1.4 s every 30 s; cut into 20 ms steps, a 30 s period visits 10 of
 * 15,000 sessions per step.
 */

/** About how long a step is: a period is cut into steps of this length (one, if shorter). */
const STEP_MS = 20;

/** A timer wheel; see the module comment. */
export interface TickWheel<T> {
  /** Visit `member` once per period from now on (its first visit within one period). */
  add(member: T): void;
  /** Stop visiting `member`. */
  delete(member: T): void;
  /** Start the shared timer (unreferenced: it keeps no process alive). */
  start(): void;
  /** Stop the shared timer. */
  stop(): void;
}

/**
 * A wheel that calls `visit` with each step's members (a live set: do not add to the wheel
 * from inside `visit`), so every member is visited once per `periodMs`.
 */
export function createTickWheel<T>(
  periodMs: number,
  visit: (members: ReadonlySet<T>) => void,
): TickWheel<T> {
  const slots = Array.from(
    { length: Math.max(1, Math.round(periodMs / STEP_MS)) },
    () => new Set<T>(),
  );
  const slotOf = new Map<T, Set<T>>();
  let dealt = 0;
  let cursor = 0;
  let timer: NodeJS.Timeout | undefined;
  const step = () => {
    const slot = slots[cursor]!;
    cursor = (cursor + 1) % slots.length;
    if (slot.size > 0) visit(slot);
  };
  return {
    add(member) {
      if (slotOf.has(member)) return;
      const slot = slots[dealt]!;
      dealt = (dealt + 1) % slots.length;
      slot.add(member);
      slotOf.set(member, slot);
    },
    delete(member) {
      slotOf.get(member)?.delete(member);
      slotOf.delete(member);
    },
    start() {
      if (timer) return;
      timer = setInterval(step, periodMs / slots.length);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
