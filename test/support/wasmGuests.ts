/**
 * WASM guests for tests, built at test time (no binary is committed): WebAssembly text
 * compiled with the `wabt` package, and C compiled with Debian's clang + wasi-libc when
 * clang is installed (`clangAvailable`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wabtInit from 'wabt';
import { sha256Hex } from '../../runtime/wasm/index.js';

/** A compiled guest and its address. */
export interface Guest {
  bytes: Uint8Array;
  hash: string;
}

const wabt = wabtInit();

/** Compile WebAssembly text to a binary. */
export async function compileWat(text: string): Promise<Guest> {
  const module = (await wabt).parseWat('guest.wat', text);
  try {
    const bytes = module.toBinary({}).buffer.slice();
    return { bytes, hash: sha256Hex(bytes) };
  } finally {
    module.destroy();
  }
}

/**
 * Shared imports and helpers of the WAT guests: `$write(fd, ptr, len)`, `$write_u32(fd, n)`
 * (decimal), `$read_stdin(at) -> len` (all of stdin into memory at `at`). Scratch memory:
 * 0..64 iovec and counters, 64..80 digits, string literals from 256.
 */
const IMPORTS = `
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))`;
const PRELUDE = `
  (func $write (param $fd i32) (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func $write_u32 (param $fd i32) (param $n i32) (local $at i32)
    (local.set $at (i32.const 80))
    (loop $digit
      (local.set $at (i32.sub (local.get $at) (i32.const 1)))
      (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $digit (local.get $n)))
    (call $write (local.get $fd) (local.get $at) (i32.sub (i32.const 80) (local.get $at))))
  (func $read_stdin (param $at i32) (result i32) (local $total i32) (local $n i32)
    (block $done
      (loop $more
        (i32.store (i32.const 0) (i32.add (local.get $at) (local.get $total)))
        (i32.store (i32.const 4) (i32.const 4096))
        (br_if $done (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (local.set $n (i32.load (i32.const 8)))
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $total (i32.add (local.get $total) (local.get $n)))
        (br $more)))
    (local.get $total))
`;

/** String literals of one guest: `put(text)` places it in a data segment and returns `ptr len`. */
function literals() {
  let at = 256;
  const segments: string[] = [];
  return {
    put(text: string): string {
      const bytes = Buffer.from(text);
      const escaped = [...bytes].map((b) => `\\${b.toString(16).padStart(2, '0')}`).join('');
      segments.push(`(data (i32.const ${at}) "${escaped}")`);
      const operands = `(i32.const ${at}) (i32.const ${bytes.length})`;
      at += bytes.length + 1;
      return operands;
    },
    data: () => segments.join('\n  '),
  };
}

/** A command module: `_start` runs `body(lit)`; `extra` adds functions or exports. */
function command(
  body: (lit: ReturnType<typeof literals>) => string,
  options: {
    memory?: number;
    imports?: string;
    extra?: (lit: ReturnType<typeof literals>) => string;
  } = {},
): string {
  const lit = literals();
  const code = body(lit);
  const extra = options.extra?.(lit) ?? '';
  return `
(module
  ${IMPORTS}
  ${options.imports ?? ''}
  ${PRELUDE}
  (memory (export "memory") ${options.memory ?? 2})
  ${lit.data()}
  ${extra}
  (func (export "_start") ${code}))
`;
}

const say = (fd: number, operands: string) => `(call $write (i32.const ${fd}) ${operands})`;
const sayNumber = (fd: number, value: string) => `(call $write_u32 (i32.const ${fd}) ${value})`;

/** WAT text of every guest the tests use, by name. */
export const WAT_GUESTS = {
  /** Writes `{"echo": <stdin>, "guest": "wat"}`. */
  echo: command(
    (lit) => `(local $len i32)
     (local.set $len (call $read_stdin (i32.const 4096)))
     ${say(1, lit.put('{"echo":'))}
     (call $write (i32.const 1) (i32.const 4096) (local.get $len))
     ${say(1, lit.put(',"guest":"wat"}'))}`,
  ),
  /** Spins forever. */
  loop: command(() => `(loop $forever (br $forever))`),
  /** Writes a reason on stderr, then exits with code 7. */
  exit7: command(
    (lit) => `${say(2, lit.put('card declined by rule 7\n'))}
     (call $proc_exit (i32.const 7))`,
  ),
  /** Writes text that is not JSON. */
  notJson: command((lit) => say(1, lit.put('not json {'))),
  /** Writes a JSON array, not an object. */
  array: command((lit) => say(1, lit.put('[1,2,3]'))),
  /**
   * Tries to reach outside the sandbox — path_open on fd 3 (the first preopen, if there were
   * one) and on stdin, fd_prestat_get(3), proc_raise(SIGKILL) — and reports every errno, the
   * environment's size and argc.
   */
  escape: command(
    (lit) => {
      const path = lit.put('etc/passwd');
      const open = (fd: number) =>
        `(call $path_open (i32.const ${fd}) (i32.const 0) ${path} (i32.const 0) (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 16))`;
      return `(local $a i32) (local $b i32) (local $c i32) (local $d i32)
     (local.set $a ${open(3)})
     (local.set $b ${open(0)})
     (local.set $c (call $fd_prestat_get (i32.const 3) (i32.const 16)))
     (local.set $d (call $proc_raise (i32.const 9)))
     (drop (call $environ_sizes_get (i32.const 24) (i32.const 28)))
     (drop (call $args_sizes_get (i32.const 32) (i32.const 36)))
     ${say(1, lit.put('{"open_fd3":'))} ${sayNumber(1, '(local.get $a)')}
     ${say(1, lit.put(',"open_stdin":'))} ${sayNumber(1, '(local.get $b)')}
     ${say(1, lit.put(',"prestat_fd3":'))} ${sayNumber(1, '(local.get $c)')}
     ${say(1, lit.put(',"raise":'))} ${sayNumber(1, '(local.get $d)')}
     ${say(1, lit.put(',"env_count":'))} ${sayNumber(1, '(i32.load (i32.const 24))')}
     ${say(1, lit.put(',"argc":'))} ${sayNumber(1, '(i32.load (i32.const 32))')}
     ${say(1, lit.put('}'))}`;
    },
    {
      imports: `
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_raise" (func $proc_raise (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))`,
    },
  ),
  /**
   * Grows its memory a page at a time until `memory.grow` fails or it has 1024 pages (64
   * MiB), then reports `{"pages": N, "grow_failed": 0|1}`.
   */
  grow: command(
    (lit) => `(local $failed i32)
     (block $stop
       (loop $more
         (br_if $stop (i32.ge_u (memory.size) (i32.const 1024)))
         (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1))
           (then (local.set $failed (i32.const 1)) (br $stop)))
         (br $more)))
     ${say(1, lit.put('{"pages":'))} ${sayNumber(1, '(memory.size)')}
     ${say(1, lit.put(',"grow_failed":'))} ${sayNumber(1, '(local.get $failed)')}
     ${say(1, lit.put('}'))}`,
    { memory: 1 },
  ),
  /**
   * Reports what an earlier call could have left in its memory — `{"word": <u32 at 8192>,
   * "last": <the last byte>, "pages": <memory.size>}` — then leaves marks there and wipes its
   * own string literals: a fresh memory reads 0, 0, 2 every time, and prints intact literals.
   */
  residue: command(
    (lit) => `${say(1, lit.put('{"word":'))} ${sayNumber(1, '(i32.load (i32.const 8192))')}
     ${say(1, lit.put(',"last":'))}
     ${sayNumber(1, '(i32.load8_u (i32.sub (i32.mul (memory.size) (i32.const 65536)) (i32.const 1)))')}
     ${say(1, lit.put(',"pages":'))} ${sayNumber(1, '(memory.size)')}
     ${say(1, lit.put('}'))}
     (i32.store (i32.const 8192) (i32.const 12345))
     (i32.store8 (i32.sub (i32.mul (memory.size) (i32.const 65536)) (i32.const 1)) (i32.const 7))
     (memory.fill (i32.const 256) (i32.const 0) (i32.const 64))`,
  ),
  /** Declares 100 pages (6.25 MiB) of initial memory. */
  bigMemory: command(() => `(nop)`, { memory: 100 }),
  /** Writes 64 KiB blocks forever (a stdout flood). */
  flood: command(
    () => `(loop $more (call $write (i32.const 1) (i32.const 0) (i32.const 65536)) (br $more))`,
  ),
  /** Executes `unreachable`. */
  trap: command(() => `(unreachable)`),
  /** Exports `_start` and `execute`: it runs as a command (`_start` wins). */
  both: command((lit) => say(1, lit.put('{"ran":"_start"}')), {
    extra: (lit) => `(func (export "execute") ${say(1, lit.put('{"ran":"execute"}'))})`,
  }),
  /** A reactor: `_initialize` sets a flag, `execute` and `other` write JSON, `failing` returns 3. */
  reactor: (() => {
    const lit = literals();
    const execute = `${say(1, lit.put('{"mode":"reactor","initialized":'))}
      ${sayNumber(1, '(global.get $initialized)')}
      ${say(1, lit.put('}'))}`;
    const other = say(1, lit.put('{"mode":"other"}'));
    return `
(module
  ${IMPORTS}
  ${PRELUDE}
  (memory (export "memory") 1)
  ${lit.data()}
  (global $initialized (mut i32) (i32.const 0))
  (func (export "_initialize") (global.set $initialized (i32.const 1)))
  (func (export "execute") (result i32) ${execute} (i32.const 0))
  (func (export "other") ${other})
  (func (export "failing") (result i32) (i32.const 3))
  (func (export "with_param") (param i32)))
`;
  })(),
  /** Imports a function the sandbox does not provide. */
  foreignImport: `
(module
  (import "env" "launch_missiles" (func $launch))
  (memory (export "memory") 1)
  (func (export "_start") (call $launch)))
`,
  /** Has no exported memory. */
  noMemory: `(module (memory 1) (func (export "_start")))`,
} as const;

/** Name of a WAT guest. */
export type WatGuestName = keyof typeof WAT_GUESTS;

/** Compile every WAT guest. */
export async function compileWatGuests(): Promise<Record<WatGuestName, Guest>> {
  const entries = await Promise.all(
    Object.entries(WAT_GUESTS).map(async ([name, text]) => [name, await compileWat(text)] as const),
  );
  return Object.fromEntries(entries) as Record<WatGuestName, Guest>;
}

/** A copy of `guest` with one byte of its code changed: same length, different hash. */
export function tampered(guest: Guest): Uint8Array {
  const bytes = guest.bytes.slice();
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x01;
  return bytes;
}

/** Whether Debian's clang can build wasm32-wasi C programs here. */
export const clangAvailable: boolean = (() => {
  try {
    execFileSync('clang', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Compile a C program to a WASI command with clang + wasi-libc. */
export function compileC(source: string): Guest {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-guest-'));
  try {
    writeFileSync(join(dir, 'guest.c'), source);
    execFileSync(
      'clang',
      ['--target=wasm32-wasi', '-O2', '-Wall', '-Werror', '-o', 'guest.wasm', 'guest.c'],
      { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const bytes = new Uint8Array(readFileSync(join(dir, 'guest.wasm')));
    return { bytes, hash: sha256Hex(bytes) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A realistic guest in C: a fraud scorer. Reads `{"amount_minor": N, "country": "XX",
 * "card_present": true|false, "attempts_last_hour": N}` on stdin with a small hand-written
 * JSON scanner, scores it, and writes `{"fraud_score": S, "fraud_decision": "approve"|"review"|"decline"}`.
 * Malformed input (no amount) writes a reason on stderr and exits 2.
 */
export const FRAUD_SCORER_C = String.raw`
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char input[65536];

/* Find "key" followed by ':' in the JSON text and return the start of its value. */
static const char *value_of(const char *json, const char *key) {
  size_t len = strlen(key);
  for (const char *p = strchr(json, '"'); p; p = strchr(p + 1, '"')) {
    if (strncmp(p + 1, key, len) == 0 && p[len + 1] == '"') {
      const char *v = p + len + 2;
      while (isspace((unsigned char)*v)) v++;
      if (*v != ':') continue;
      v++;
      while (isspace((unsigned char)*v)) v++;
      return v;
    }
  }
  return NULL;
}

int main(void) {
  size_t n = fread(input, 1, sizeof input - 1, stdin);
  input[n] = '\0';
  const char *amount = value_of(input, "amount_minor");
  if (!amount || !(isdigit((unsigned char)*amount) || *amount == '-')) {
    fprintf(stderr, "input has no numeric amount_minor\n");
    return 2;
  }
  long long amount_minor = strtoll(amount, NULL, 10);
  const char *country = value_of(input, "country");
  const char *present = value_of(input, "card_present");
  const char *attempts = value_of(input, "attempts_last_hour");

  int score = 0;
  if (amount_minor > 100000) score += 40;
  else if (amount_minor > 20000) score += 20;
  if (country && strncmp(country, "\"DE\"", 4) != 0 && strncmp(country, "\"FR\"", 4) != 0) score += 25;
  if (present && strncmp(present, "false", 5) == 0) score += 15;
  if (attempts) {
    long a = strtol(attempts, NULL, 10);
    score += a > 5 ? 30 : (int)(a * 4);
  }
  if (score > 100) score = 100;
  const char *decision = score >= 70 ? "decline" : score >= 40 ? "review" : "approve";
  printf("{\"fraud_score\": %d, \"fraud_decision\": \"%s\"}\n", score, decision);
  return 0;
}
`;

/** A one-WASM-step workflow; `config` and `extra` are YAML fragments of the step. */
export const wasmFlow = (type: string, hash: string, config = '', extra = '') => `
workflow_type: ${type}
steps:
  - name: score
    type: WASM
    wasm_config:
      wasm_hash: ${hash}
${config
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => `      ${l.trim()}`)
  .join('\n')}
${extra
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => `    ${l.trim()}`)
  .join('\n')}
`;
