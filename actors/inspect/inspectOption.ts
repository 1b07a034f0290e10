/**
 * `RuntimeOptions.inspect`: where a runtime sends inspection messages — a `ws://` / `wss://`
 * URL (the runtime then owns a {@link createWebSocketInspector} client and closes it with
 * itself), an observer of its own, or either with more masking.
 */
import type { JsonObject } from '../../runtime/index.js';
import type { InspectionObserver } from './protocol.js';
import {
  createWebSocketInspector,
  type WebSocketInspector,
  type WebSocketInspectorOptions,
} from './webSocketInspector.js';

/** An inspector with options. */
export interface InspectOptions {
  /** A `ws://` / `wss://` URL, or an observer of the messages. */
  to: string | URL | InspectionObserver;
  /** More masking after the built-in redaction (see actors/inspect/redact.ts). */
  redact?: (value: JsonObject) => JsonObject;
  /** Buffer and reconnect settings of the WebSocket client (URL only). */
  webSocket?: WebSocketInspectorOptions;
}

/** What `RuntimeOptions.inspect` takes. */
export type InspectOption = string | URL | InspectionObserver | InspectOptions;

/** An inspector ready for a sink: its observer, extra masking, and how to release it. */
export interface ResolvedInspector {
  observer: InspectionObserver;
  redact: ((value: JsonObject) => JsonObject) | undefined;
  /** The WebSocket client the runtime opened, if any. */
  client: WebSocketInspector | undefined;
}

const isOptions = (o: InspectOption): o is InspectOptions =>
  typeof o === 'object' && !(o instanceof URL) && 'to' in o;

/** Resolve `option`, connecting when it names a URL (an invalid URL throws INSPECT_URL_INVALID). */
export function resolveInspector(option: InspectOption): ResolvedInspector {
  const { to, redact, webSocket } = isOptions(option)
    ? option
    : { to: option, redact: undefined, webSocket: undefined };
  if (typeof to === 'string' || to instanceof URL) {
    const client = createWebSocketInspector(to, webSocket);
    return { observer: client, redact, client };
  }
  return { observer: to, redact, client: undefined };
}
