/**
 * Component guests for tests, built at test time with jco (no binary is committed):
 * - {@link commandComponent}: a preview1 command module turned into a component exporting
 *   `wasi:cli/run` with the preview1 adapter — what `jco new guest.wasm --wasi-command` does;
 * - {@link typedComponent}: a core module in WebAssembly text implementing
 *   `execute: func(input: string) -> result<string, string>` by the canonical ABI, with the
 *   WIT world embedded, then made a component;
 * - {@link socketComponent}: a component (component text format) that imports a WASI
 *   sockets interface.
 */
import { readFileSync } from 'node:fs';
import {
  componentEmbed,
  componentNew,
  parse,
  preview1AdapterCommandPath,
} from '@bytecodealliance/jco';
import { sha256Hex } from '../../runtime/wasm/index.js';
import type { Guest } from '../support/wasmGuests.js';

const guest = (bytes: Uint8Array): Guest => ({ bytes, hash: sha256Hex(bytes) });

/** `module` (a preview1 command) as a `wasi:cli/run` component. */
export async function commandComponent(module: Guest): Promise<Guest> {
  const adapter = readFileSync(preview1AdapterCommandPath());
  return guest(await componentNew(module.bytes, [['wasi_snapshot_preview1', adapter]]));
}

/** The WIT world of typed step components. */
export const STEP_WORLD = `package saffron:step;

world step {
  export execute: func(input: string) -> result<string, string>;
}
`;

/**
 * `execute(input)`: `ok("{\"typed\":" + input + "}")` when the input starts with `{`, else
 * `err("expected a JSON object")`. Return area at 960: tag u8, then (ptr, len) at +4.
 */
export const TYPED_WAT = `
(module
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 4096))
  (data (i32.const 16) "{\\"typed\\":")
  (data (i32.const 32) "expected a JSON object")
  (func $alloc (param $size i32) (result i32) (local $ptr i32) (local $end i32)
    (local.set $ptr (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (local.set $end (i32.add (local.get $ptr) (local.get $size)))
    (block $fits
      (br_if $fits (i32.le_u (local.get $end) (i32.mul (memory.size) (i32.const 65536))))
      (if (i32.eq (memory.grow (i32.add (i32.shr_u (local.get $size) (i32.const 16)) (i32.const 1))) (i32.const -1))
        (then (unreachable))))
    (global.set $heap (local.get $end))
    (local.get $ptr))
  (func (export "cabi_realloc") (param i32 i32 i32) (param $size i32) (result i32)
    (call $alloc (local.get $size)))
  (func (export "execute") (param $ptr i32) (param $len i32) (result i32) (local $out i32)
    (if (i32.or (i32.eqz (local.get $len)) (i32.ne (i32.load8_u (local.get $ptr)) (i32.const 123)))
      (then
        (i32.store8 (i32.const 960) (i32.const 1))
        (i32.store (i32.const 964) (i32.const 32))
        (i32.store (i32.const 968) (i32.const 22))
        (return (i32.const 960))))
    (local.set $out (call $alloc (i32.add (local.get $len) (i32.const 10))))
    (memory.copy (local.get $out) (i32.const 16) (i32.const 9))
    (memory.copy (i32.add (local.get $out) (i32.const 9)) (local.get $ptr) (local.get $len))
    (i32.store8 (i32.add (local.get $out) (i32.add (local.get $len) (i32.const 9))) (i32.const 125))
    (i32.store8 (i32.const 960) (i32.const 0))
    (i32.store (i32.const 964) (local.get $out))
    (i32.store (i32.const 968) (i32.add (local.get $len) (i32.const 10)))
    (i32.const 960)))
`;

/** The typed-function component of {@link TYPED_WAT} and {@link STEP_WORLD}. */
export async function typedComponent(): Promise<Guest> {
  const core = await parse(TYPED_WAT);
  const embedded = await componentEmbed({ binary: core, witSource: STEP_WORLD, world: 'step' });
  return guest(await componentNew(embedded));
}

/** A component that imports `wasi:sockets/tcp-create-socket` and exports `wasi:cli/run`. */
export async function socketComponent(): Promise<Guest> {
  return guest(
    await parse(`
(component
  (import "wasi:sockets/tcp-create-socket@0.2.0" (instance $sockets
    (export "create-tcp-socket" (func (param "address-family" u8)))))
  (core module $m (func (export "run") (result i32) (i32.const 0)))
  (core instance $i (instantiate $m))
  (type $result (result))
  (func $run (result $result) (canon lift (core func $i "run")))
  (instance $runner (export "run" (func $run)))
  (export "wasi:cli/run@0.2.0" (instance $runner)))
`),
  );
}

/**
 * A preview1 command that tries to open `etc/passwd` under fd 3 (the first preopen, if there
 * were one) and to read fd 3's preopen, then prints `{"open_fd3":errno,"prestat_fd3":errno}`.
 */
export const OPEN_FILE_WAT = `
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 256) "etc/passwd")
  (data (i32.const 300) "{\\"open_fd3\\":")
  (data (i32.const 320) ",\\"prestat_fd3\\":")
  (data (i32.const 340) "}")
  (func $write (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func $number (param $n i32) (local $at i32)
    (local.set $at (i32.const 80))
    (loop $digit
      (local.set $at (i32.sub (local.get $at) (i32.const 1)))
      (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $digit (local.get $n)))
    (call $write (local.get $at) (i32.sub (i32.const 80) (local.get $at))))
  (func (export "_start") (local $open i32) (local $prestat i32)
    (local.set $open (call $path_open (i32.const 3) (i32.const 0) (i32.const 256) (i32.const 10)
      (i32.const 0) (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 16)))
    (local.set $prestat (call $fd_prestat_get (i32.const 3) (i32.const 16)))
    (call $write (i32.const 300) (i32.const 12))
    (call $number (local.get $open))
    (call $write (i32.const 320) (i32.const 15))
    (call $number (local.get $prestat))
    (call $write (i32.const 340) (i32.const 1))))
`;

/**
 * A component importing a function of a provided interface that the sandbox does not
 * implement (`wasi:cli/environment.get-future-thing`, as a later WASI release might add) and
 * calling it from `run`.
 */
export async function futureImportComponent(): Promise<Guest> {
  return guest(
    await parse(`
(component
  (import "wasi:cli/environment@0.2.0" (instance $env (export "get-future-thing" (func))))
  (alias export $env "get-future-thing" (func $future))
  (core func $lowered (canon lower (func $future)))
  (core module $m
    (import "host" "future" (func $future))
    (func (export "run") (result i32) (call $future) (i32.const 0)))
  (core instance $host (export "future" (func $lowered)))
  (core instance $i (instantiate $m (with "host" (instance $host))))
  (type $result (result))
  (func $run (result $result) (canon lift (core func $i "run")))
  (instance $runner (export "run" (func $run)))
  (export "wasi:cli/run@0.2.0" (instance $runner)))
`),
  );
}
