/**
 * WebAssembly components (Component Model, WASI 0.2) turned into something a worker thread
 * can run: jco's transpiled JavaScript in *sync instantiation* mode plus the component's core
 * modules. In that mode the generated code imports nothing — not the unrestricted
 * `@bytecodealliance/preview2-shim`, which jco otherwise maps every `wasi:*` import to — and
 * takes every import as an argument of `instantiate(getCoreModule, imports)`. The worker
 * passes its own minimal WASI 0.2 implementation (componentHost.ts), so an import map is not
 * needed: whatever the component imports beyond {@link PROVIDED_INTERFACES} is refused here,
 * before anything runs, with WASM_LINK_FAILED naming it.
 *
 * Where the result lives. Transpiling costs hundreds of milliseconds, so it happens once per
 * hash and process: at registration (cloud) or when the edge caches the binary, else at the
 * first call. The result is kept in memory, not on disk: the JavaScript runs with the worker
 * thread's privileges, and a file next to the binary would be a second thing that could be
 * changed after the fact, outside the SHA-256 that guards the binary (the edge keeps its
 * binaries in SQLite, where there is no "next to" either). The cache is keyed by the hash of
 * bytes that were verified just before transpiling, so an entry can never go stale: it is a
 * memo of a pure function, shared by every runner of the process — the many edge agents of
 * one process included — and bounded (least recently used first out). The artifacts are
 * copied once into a SharedArrayBuffer, so handing them to a thread on every call copies
 * nothing.
 *
 * jco is loaded on first use only: a process that never sees a component never loads it.
 */
import { toError } from '../errors.js';
import { WasmError } from './errors.js';
import { hashMatches, sha256Hex } from './hash.js';

/**
 * WASI 0.2 interfaces the sandbox implements (componentHost.ts), without versions — the keys
 * of jco's instantiation imports. Filesystem interfaces are present so that preview1 guests
 * adapted with `jco new` link (the adapter imports them); there are no preopened directories,
 * so no file can ever be opened. Sockets, HTTP and everything else are absent.
 */
export const PROVIDED_INTERFACES = [
  'wasi:cli/environment',
  'wasi:cli/exit',
  'wasi:cli/stdin',
  'wasi:cli/stdout',
  'wasi:cli/stderr',
  'wasi:cli/terminal-input',
  'wasi:cli/terminal-output',
  'wasi:cli/terminal-stdin',
  'wasi:cli/terminal-stdout',
  'wasi:cli/terminal-stderr',
  'wasi:clocks/monotonic-clock',
  'wasi:clocks/wall-clock',
  'wasi:filesystem/preopens',
  'wasi:filesystem/types',
  'wasi:io/error',
  'wasi:io/poll',
  'wasi:io/streams',
  'wasi:random/random',
  'wasi:random/insecure',
  'wasi:random/insecure-seed',
] as const;
const PROVIDED: ReadonlySet<string> = new Set(PROVIDED_INTERFACES);

/** How a component is called. */
export type ComponentEntry =
  /** It exports `wasi:cli/run`: stdin/stdout like a preview1 command. */
  | { kind: 'command'; exportName: string }
  /** It exports functions taking the JSON input text (see docs/guides/wasm-components.md). */
  | { kind: 'functions'; names: string[] };

/** A transpiled component as a thread receives it. Only structured-cloneable data. */
export interface ComponentArtifacts {
  /**
   * Body of a function of the global object (parameter {@link REAL_GLOBAL_PARAMETER})
   * returning jco's `instantiate`, UTF-8. It and the core modules are views of one
   * SharedArrayBuffer.
   */
  source: Uint8Array;
  /** The core modules, by the name the generated code asks `getCoreModule` for. */
  cores: { name: string; bytes: Uint8Array }[];
  entry: ComponentEntry;
}

interface Jco {
  transpileBytes: (
    component: Uint8Array,
    options: Record<string, unknown>,
  ) => Promise<{
    files: Record<string, Uint8Array>;
    imports: string[];
    exports: [string, string][];
  }>;
  componentWit: (component: Uint8Array) => Promise<string>;
}

let jco: Promise<Jco> | undefined;

function loadJco(): Promise<Jco> {
  jco ??= Promise.all([
    import('@bytecodealliance/jco-transpile'),
    import('@bytecodealliance/jco-transpile/wasm-tools'),
  ]).then(
    ([transpiler, tools]) => ({
      transpileBytes: (transpiler as unknown as Jco).transpileBytes,
      componentWit: (tools as unknown as Jco).componentWit,
    }),
    (error: unknown) => {
      jco = undefined;
      throw new WasmError(
        'WASM_TRANSPILE_FAILED',
        `running WebAssembly components needs @bytecodealliance/jco-transpile: ${toError(error).message}`,
        { cause: error },
      );
    },
  );
  return jco;
}

/**
 * Every import of the component's world (its WIT, as wasm-tools prints it) — all of them, not
 * only those its code ends up calling, which is all that jco reports.
 */
function worldImports(wit: string): string[] {
  return [...wit.matchAll(/^\s*import\s+([^\s;]+?)\s*(?:;|:\s)/gm)].map((m) => m[1]!);
}

/** Whether the sandbox provides `name` (`wasi:cli/stdin@0.2.3`): listed, and of WASI 0.2. */
function provided(name: string): boolean {
  const at = name.lastIndexOf('@');
  const version = at < 0 ? undefined : name.slice(at + 1);
  return PROVIDED.has(unversioned(name)) && (version === undefined || version.startsWith('0.2.'));
}

/**
 * `parts` copied into one SharedArrayBuffer, as views of it: a message carrying them all
 * clones one shared buffer, not one per part (each costs a thread a few microseconds a call).
 */
function sharedTogether(parts: Uint8Array[]): Uint8Array[] {
  const buffer = new SharedArrayBuffer(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  return parts.map((part) => {
    const view = new Uint8Array(buffer, at, part.length);
    view.set(part);
    at += part.length;
    return view;
  });
}

const unversioned = (name: string) => name.replace(/@[^/@]*$/, '');

/** The call shape of a component, from the exports jco reports. */
function entryOf(exports: [string, string][]): ComponentEntry {
  const run = exports.find(
    ([name, kind]) => kind === 'instance' && /^wasi:cli\/run@0\.2\./.test(name),
  );
  if (run) return { kind: 'command', exportName: run[0] };
  const names = exports.filter(([, kind]) => kind === 'function').map(([name]) => name);
  if (names.length > 0) return { kind: 'functions', names };
  throw new WasmError(
    'WASM_ENTRYPOINT_MISSING',
    'the component exports neither wasi:cli/run@0.2 nor a function (e.g. execute: func(input: string) -> result<string, string>)',
  );
}

const HEADER =
  /^export function instantiate\(getCoreModule, imports, instantiateCore = [^\n]*\{\n/m;

/**
 * jco's module text as the body of a function that returns `instantiate`.
 *
 * jco (1.35) emits its whole runtime — thousands of lines of classes and helpers for the
 * component model's task and resource bookkeeping — inside `instantiate`, so every call would
 * create all of it again: about 5 ms, thirty times a preview1 instantiation. That runtime is
 * the part before the first core module (`const module0 = getCoreModule(…)`; its indentation
 * is not a guide: jco's is uneven) and reads none of `instantiate`'s parameters (only its
 * comments name them), so it is moved in front of it: evaluated once when a thread loads the
 * component, while the core instances, the imports and the trampolines stay per call. Its
 * bookkeeping then outlives a call; the worker evaluates it afresh after any call that did not
 * return cleanly (componentWorker.ts). Output of another shape — a runtime whose code names a
 * parameter, no `module0` — runs unchanged, only slower.
 */
const FIRST_INSTANCE_LINE = /^[ \t]*const module0 = getCoreModule\(/m;
const READS_PARAMETERS = /\b(getCoreModule|imports|instantiateCore)\b/;
const LINE_COMMENT = /^[ \t]*\/\/.*$/gm;
/**
 * The scope jco's code runs in, given as the names it reads from the global scope:
 * - Where the engine has no JSPI (Node 20), it calls `WebAssembly.promising` in a try/catch
 *   and keeps the function as it is. The TypeError's message names the call site, for which
 *   V8 re-parses the whole enclosing function — milliseconds, on every call. The same
 *   fallback, given up front, spares the throw; an engine with JSPI keeps its own.
 * - Its debug log reads `globalThis.process.env.JCO_DEBUG` on each of its many calls per
 *   host call; here `process` is absent from its `globalThis`, so the log is off at no cost
 *   (and a guest's run never depends on the host's environment).
 * Every other global reads through to the real one. The function's parameter is the real
 * global object.
 */
const SCOPE = [
  'const WebAssembly = Object.create(realGlobal.WebAssembly, { promising: { value: realGlobal.WebAssembly.promising ?? ((fn) => fn) } });',
  'const globalThis = Object.create(realGlobal, { process: { value: undefined }, WebAssembly: { value: WebAssembly } });',
].join('\n');

/**
 * Host calls without jco's task bookkeeping.
 *
 * jco (1.35) gives every call of a host import two tasks of the component model's async
 * machinery: `_lowerImportBackwardsCompat` opens a subtask of the guest's task (a waitable
 * with a promise, call metadata, state checks), then the trampoline opens a host task
 * (another such object, registered in the component's task lists), enters it, resolves it,
 * whose resolution resolves the subtask, whose result is what the guest gets. For a
 * synchronous import lowered synchronously — every import of a WASI 0.2 guest, and all our
 * host offers — none of it changes the outcome: the trampoline itself lifts the arguments
 * and lowers the result into the guest's memory; the host answers at once; nothing can run
 * in between. A preview1 guest adapted by `jco new` makes about ten such calls per run, and
 * the bookkeeping was most of a call's time and garbage.
 *
 * So each trampoline whose task preamble has the expected shape gets a second way in: called
 * by {@link SYNC_HOST_HELPERS}' `_saffronSyncImport` (or `_saffronLowerSync`, see
 * {@link lazyConfigs}), it takes a plain task object that records its result instead of
 * creating the two (the may-leave check, the lifting and lowering, the resource borrows and
 * the error handling are jco's, unchanged). Calls that are asynchronous by their type or
 * lowering go the original way, and so does any trampoline not recognised. Measured on the
 * bench's preview1 command, this and {@link lazyConfigs} took a call on the thread from about
 * 0.31 to 0.13 ms (the runtime evaluated once, above, had taken it from 0.66).
 */
const SYNC_PREAMBLE =
  /\n([ \t]*)let parentTask;\n\s*let task;\n\s*let subtask;\n(\s*const createTask = \(\) => \{\n\s*const results = createNewCurrentTask\(\{\n\s*componentIdx: -1,[\s\S]*?\n\s*taskCreation: \{[\s\S]*?\n\1\})\n\s*\n\s*const started = task\.enterSync\(\);/;
const TRAMPOLINE =
  /^([ \t]*)const (_trampoline\d+) = function\([^)]*\) \{\n[\s\S]*?^\1\2\.fnName = [^\n]*\n/gm;

const SYNC_HOST_HELPERS = `
let _saffronPendingHostTask = null;
let _saffronHostTaskIds = 0;
/** The host task of a synchronous host call: the parts of jco's task its trampolines use. */
class _SaffronSyncHostTask {
  #id = --_saffronHostTaskIds;
  #result;
  #resolved = false;
  enterSync() { return true; }
  componentIdx() { return -1; }
  id() { return this.#id; }
  setParentSubtask() {}
  getParentSubtask() { return undefined; }
  setErrored() {}
  reject() {}
  exit() {}
  resolve(results) {
    if (this.#resolved) throw new Error('host task resolved twice');
    if (results.length > 1) throw new Error('unexpected number of results');
    this.#resolved = true;
    this.#result = results[0];
  }
  result() {
    if (!this.#resolved) throw new Error('the host import returned no result');
    return this.#result;
  }
}
function _saffronSyncImport(componentIdx, importFn, config) {
  if (importFn._saffronSync !== true || importFn.manuallyAsync)
    return _saffronLowerSync.bind(null, config());
  return function (...params) {
    _checkMayLeave(componentIdx);
    const task = new _SaffronSyncHostTask();
    _saffronPendingHostTask = task;
    try {
      importFn(...params);
    } finally {
      _saffronPendingHostTask = null;
    }
    return task.result();
  };
}
function _saffronLowerSync(args, ...params) {
  const { isAsync, isManualAsync, funcTypeIsAsync, importFn, componentIdx } = args;
  if (isAsync || isManualAsync || funcTypeIsAsync || importFn._saffronSync !== true)
    return _lowerImportBackwardsCompat(args, ...params);
  _checkMayLeave(componentIdx);
  const task = new _SaffronSyncHostTask();
  _saffronPendingHostTask = task;
  try {
    importFn(...params);
  } finally {
    _saffronPendingHostTask = null;
  }
  return task.result();
}
`;

/**
 * `body` with the synchronous host calls' fast way in (see {@link SYNC_PREAMBLE}); `runtime`
 * is jco's runtime, moved in front of `instantiate`, where the helpers find the functions they
 * fall back to.
 */
function syncHostCalls(body: string, runtime: string): string {
  if (
    !/^\s*function _lowerImportBackwardsCompat\(/m.test(runtime) ||
    !/^\s*function _checkMayLeave\(/m.test(runtime)
  )
    return body;
  let rewritten = 0;
  const out = body.replace(TRAMPOLINE, (trampoline: string, indent: string, name: string) => {
    const preamble = SYNC_PREAMBLE.exec(trampoline);
    if (!preamble) return trampoline;
    rewritten++;
    const [whole, inner, original] = preamble;
    const fast =
      `\n${inner}let parentTask;\n${inner}let task;\n${inner}let subtask;\n` +
      `${inner}if (_saffronPendingHostTask !== null) {\n` +
      `${inner}  task = _saffronPendingHostTask;\n${inner}  _saffronPendingHostTask = null;\n` +
      `${inner}} else {\n${original}\n${inner}}\n${inner}const started = task.enterSync();`;
    return `${trampoline.replace(whole, () => fast)}${indent}${name}._saffronSync = true;\n`;
  });
  if (rewritten === 0) return body;
  return (
    lazyConfigs(out).replace(/_lowerImportBackwardsCompat\.bind\(/g, '_saffronLowerSync.bind(') +
    SYNC_HOST_HELPERS
  );
}

const LOWERING = /_lowerImportBackwardsCompat\.bind\(\s*null,\s*\{/g;

/**
 * Call configurations built only if needed. Each host import's lowering is jco's
 * `_lowerImportBackwardsCompat` bound to a configuration object that also carries the
 * functions lifting its parameters and lowering its results for the async machinery —
 * closures over the instance's tables, built by helpers that index their cases: a few dozen
 * per instance, rebuilt at every instantiation, and never read on the synchronous way in,
 * where the trampoline lifts and lowers itself. Where the configuration says, at its top
 * level, `isAsync: false`, `funcTypeIsAsync: false` and which trampoline and component it is
 * for, the binding becomes `_saffronSyncImport(component, trampoline, () => configuration)`,
 * which builds the configuration only when it falls back to the original way (a trampoline
 * not rewritten, or marked manually async at instantiation). Any other binding stays as it
 * is, on `_saffronLowerSync`'s check at each call.
 */
function lazyConfigs(body: string): string {
  const parts: string[] = [];
  let at = 0;
  for (const match of body.matchAll(LOWERING)) {
    const open = match.index + match[0].length - 1;
    const close = closingBracket(body, open);
    const tail = close < 0 ? null : /^\s*,?\s*\)/.exec(body.slice(close + 1));
    if (!tail || match.index < at) continue;
    const config = body.slice(open, close + 1);
    const indent = /^\{\n([ \t]+)\S/.exec(config)?.[1];
    if (indent === undefined) continue;
    const key = (name: string) =>
      new RegExp(`\\n${indent}${name}: ([^\\n]*?),\\n`).exec(config)?.[1];
    const importFn = key('importFn');
    const componentIdx = key('componentIdx');
    if (
      key('isAsync') !== 'false' ||
      key('funcTypeIsAsync') !== 'false' ||
      !/^_trampoline\d+$/.test(importFn ?? '') ||
      !/^\d+$/.test(componentIdx ?? '')
    )
      continue;
    parts.push(
      body.slice(at, match.index),
      `_saffronSyncImport(${componentIdx}, ${importFn}, () => (${config}))`,
    );
    at = close + 1 + tail[0].length;
  }
  parts.push(body.slice(at));
  return parts.join('');
}

const JS_SHIM_HELPERS = `
const _saffronShimTargets = Symbol('targets');
function _saffronJsShim(keys) {
  const targets = Object.create(null);
  const shim = { [_saffronShimTargets]: targets };
  for (const key of keys) {
    shim[key] = function (...args) {
      const target = targets[key];
      if (target === undefined) throw new WebAssembly.RuntimeError('uninitialized element');
      return target(...args);
    };
  }
  return shim;
}
function _saffronFillShim(shim, actual) {
  Object.assign(shim[_saffronShimTargets], actual);
}
`;

const SHIM_INSTANCE = /\(\{ exports: (exports\d+) \} = instantiateCore\((module\d+)\)\);/g;

/**
 * jco's indirection shims as JavaScript. Core instances import functions that exist only
 * once later instances do (the guest imports the adapter's `fd_write`, the adapter imports
 * lowered host functions that need the guest's memory), so jco instantiates a shim module
 * — a table and functions that call through it — for them to import, and after the last
 * instance a fixup module whose only work is to fill that table. Two core instances more
 * per call, with their tables and the engine's bookkeeping: on the bench's command, a fifth
 * of making an instance (0.058 → 0.046 ms), and garbage the thread collects in full every
 * few hundred calls. Here the shim is an object of JavaScript functions that call the same targets,
 * set by `_saffronFillShim` where the fixup instance was made: the same calls in the same
 * order, an unset entry trapping as the table's would. Only when the shim's exports are used
 * for nothing else, the fixup's exports for nothing, and every entry used is one it fills.
 */
function jsShims(body: string): string {
  let out = body;
  for (const shim of body.matchAll(SHIM_INSTANCE)) {
    const [instantiation, name] = shim;
    const fixup = new RegExp(
      String.raw`\(\{ exports: (exports\d+) \} = instantiateCore\(module\d+, \{\n([ \t]*)actual: \{\n([\s\S]*?)\n\2\},\n\2shim: \{\n[ \t]*\$imports: ${name}\.\$imports,\n\2\},\n[ \t]*\}\)\);`,
    ).exec(out);
    if (!fixup) continue;
    const [whole, fixupExports, , entries] = fixup;
    const indent = /^([ \t]*)'/.exec(entries!)?.[1];
    if (indent === undefined) continue;
    const keys = [...entries!.matchAll(new RegExp(`^${indent}'(\\d+)': `, 'gm'))].map((m) => m[1]!);
    const used = [...out.matchAll(new RegExp(String.raw`\b${name}\['(\d+)'\]`, 'g'))].map(
      (m) => m[1]!,
    );
    const mentions = out.match(new RegExp(String.raw`\b${name}\b`, 'g'))?.length ?? 0;
    const fixupMentions = out.match(new RegExp(String.raw`\b${fixupExports}\b`, 'g'))?.length ?? 0;
    if (
      keys.length === 0 ||
      !used.every((key) => keys.includes(key)) ||
      mentions !== used.length + 3 || // its declaration, its instantiation, the fixup
      fixupMentions !== 2 // its declaration, the fixup
    )
      continue;
    out = out
      .replace(whole, () => `_saffronFillShim(${name}, {\n${entries}\n${indent.slice(2)}});`)
      .replace(instantiation, () => `${name} = _saffronJsShim(${JSON.stringify(keys)});`);
  }
  return out === body ? body : out + JS_SHIM_HELPERS;
}

/** The parameter name of the real global object in {@link ComponentArtifacts.source}. */
export const REAL_GLOBAL_PARAMETER = 'realGlobal';

function functionBody(js: string): string {
  const header = HEADER.exec(js);
  let body = js.replace(/^export function instantiate\(/m, 'function instantiate(');
  // the runtime, when it could be moved out of `instantiate`
  let runtime: string | undefined;
  if (header) {
    const start = header.index + header[0].length;
    const split = js.slice(start).search(FIRST_INSTANCE_LINE);
    const prelude = split < 0 ? '' : js.slice(start, start + split);
    if (split >= 0 && !READS_PARAMETERS.test(prelude.replace(LINE_COMMENT, ''))) {
      runtime = prelude;
      body =
        js.slice(0, header.index) +
        prelude +
        header[0].replace(/^export /, '') +
        js.slice(start + split);
    }
  }
  body = body.replace(/^export const _util\b/m, 'const _util');
  if (/^\s*(export|import)\s/m.test(body) || !body.includes('function instantiate('))
    throw new WasmError(
      'WASM_TRANSPILE_FAILED',
      'the transpiled component has a shape this runtime does not know (jco version?)',
    );
  const plain = `'use strict';\n${SCOPE}\n${body}\nreturn instantiate;`;
  if (runtime === undefined) return plain;
  const fast = `'use strict';\n${SCOPE}\n${jsShims(syncHostCalls(body, runtime))}\nreturn instantiate;`;
  try {
    // the rewrites are textual: should one ever produce what does not parse, run jco's own
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    new Function(REAL_GLOBAL_PARAMETER, fast);
    return fast;
  } catch {
    return plain;
  }
}

const CLOSER: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/**
 * Where the bracket opened at `open` closes, skipping quoted strings and comments; -1 when a
 * template literal, a mismatched bracket or anything unexpected makes that unsure.
 */
function closingBracket(text: string, open: number): number {
  const expected: string[] = [];
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      for (i++; i < text.length && text[i] !== c; i++) {
        if (text[i] === '\\') i++;
        else if (text[i] === '\n') return -1;
      }
    } else if (c === '`') return -1;
    else if (c === '/' && text[i + 1] === '/') {
      i = text.indexOf('\n', i);
      if (i < 0) return -1;
    } else if (c === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i + 2) + 1;
      if (i <= 0) return -1;
    } else if (CLOSER[c]) expected.push(CLOSER[c]);
    else if (c === ')' || c === ']' || c === '}') {
      if (expected.pop() !== c) return -1;
      if (expected.length === 0) return i;
    }
  }
  return -1;
}

/**
 * Transpile `bytes` (a component) with jco in sync instantiation mode and check its imports
 * and exports. Throws WASM_INVALID_MODULE (not a valid component), WASM_LINK_FAILED (it
 * imports what the sandbox does not provide), WASM_ENTRYPOINT_MISSING or
 * WASM_TRANSPILE_FAILED.
 */
export async function transpileComponent(bytes: Uint8Array): Promise<ComponentArtifacts> {
  const { transpileBytes, componentWit } = await loadJco();
  let result: Awaited<ReturnType<Jco['transpileBytes']>>;
  let wit: string;
  try {
    wit = await componentWit(bytes);
    result = await transpileBytes(bytes, {
      name: 'component',
      instantiation: 'sync',
      base64Cutoff: 0,
      noComponentErrorWrapping: false,
      emitTypescriptDeclarations: false,
      quiet: true,
    });
  } catch (error) {
    throw new WasmError(
      'WASM_INVALID_MODULE',
      `not a valid WebAssembly component: ${toError(error).message}`,
      { cause: error },
    );
  }
  const refused = [...new Set([...worldImports(wit), ...result.imports])].filter(
    (name) => !provided(name),
  );
  if (refused.length > 0)
    throw new WasmError(
      'WASM_LINK_FAILED',
      `the component imports ${refused.join(', ')}, which the sandbox does not provide (it provides WASI 0.2 stdio, clocks, random and an empty filesystem; no sockets, no HTTP, no environment)`,
      { details: { refused_imports: refused } },
    );
  const entry = entryOf(result.exports);
  const js = result.files['component.js'];
  if (!js) throw new WasmError('WASM_TRANSPILE_FAILED', 'jco produced no component.js');
  const cores = Object.entries(result.files)
    .filter(([name]) => name.endsWith('.wasm'))
    .map(([name, core]) => ({ name, bytes: core }));
  const text = Buffer.from(functionBody(Buffer.from(js).toString('utf8')), 'utf8');
  const [source, ...coreBytes] = sharedTogether([text, ...cores.map((core) => core.bytes)]);
  return {
    source: source!,
    cores: cores.map((core, i) => ({ name: core.name, bytes: coreBytes[i]! })),
    entry,
  };
}

/** Most transpiled components kept in memory by one process. */
const MAX_TRANSPILED = 64;
const transpiled = new Map<string, Promise<ComponentArtifacts>>();

/**
 * The artifacts of component `hash`, transpiled from `bytes` on the first request of this
 * process and kept (see the module comment). `bytes` are verified against `hash` before they
 * are transpiled; a mismatch is WASM_HASH_MISMATCH. A failed transpilation is not kept.
 */
export function componentArtifacts(hash: string, bytes: Uint8Array): Promise<ComponentArtifacts> {
  const cached = transpiled.get(hash);
  if (cached) {
    transpiled.delete(hash); // re-insert: least recently used first
    transpiled.set(hash, cached);
    return cached;
  }
  if (!hashMatches(bytes, hash)) {
    const actual = sha256Hex(bytes);
    return Promise.reject(
      new WasmError(
        'WASM_HASH_MISMATCH',
        `the stored binary hashes to ${actual}, not to the requested hash: refusing to run it`,
        { details: { actual_hash: actual } },
      ),
    );
  }
  const started = transpileComponent(bytes);
  transpiled.set(hash, started);
  if (transpiled.size > MAX_TRANSPILED) transpiled.delete(transpiled.keys().next().value!);
  started.catch(() => {
    if (transpiled.get(hash) === started) transpiled.delete(hash);
  });
  return started;
}
