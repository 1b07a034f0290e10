;; A fraud score as a WASI preview1 command: reads the step's JSON input on stdin, adds up its
;; decimal digits and prints {"fraud_score": <sum mod 101>} on stdout. The same binary runs as
;; a core module, and — turned into a component by `jco new score.wasm --wasi-command` — as a
;; WebAssembly component exporting wasi:cli/run (see build.mjs).
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 200) "{\"fraud_score\":")
  (data (i32.const 240) "}")
  (func $write (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func (export "_start")
    (local $total i32) (local $n i32) (local $i i32) (local $c i32) (local $sum i32) (local $at i32)
    ;; all of stdin into memory at 1024
    (block $done
      (loop $more
        (i32.store (i32.const 0) (i32.add (i32.const 1024) (local.get $total)))
        (i32.store (i32.const 4) (i32.const 8192))
        (br_if $done (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (local.set $n (i32.load (i32.const 8)))
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $total (i32.add (local.get $total) (local.get $n)))
        (br $more)))
    ;; the sum of its decimal digits
    (block $end
      (loop $scan
        (br_if $end (i32.ge_u (local.get $i) (local.get $total)))
        (local.set $c (i32.load8_u (i32.add (i32.const 1024) (local.get $i))))
        (if (i32.and (i32.ge_u (local.get $c) (i32.const 48)) (i32.le_u (local.get $c) (i32.const 57)))
          (then (local.set $sum (i32.add (local.get $sum) (i32.sub (local.get $c) (i32.const 48))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (local.set $sum (i32.rem_u (local.get $sum) (i32.const 101)))
    ;; printed in decimal, right-aligned ending at 100
    (local.set $at (i32.const 100))
    (loop $digit
      (local.set $at (i32.sub (local.get $at) (i32.const 1)))
      (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.rem_u (local.get $sum) (i32.const 10))))
      (local.set $sum (i32.div_u (local.get $sum) (i32.const 10)))
      (br_if $digit (local.get $sum)))
    (call $write (i32.const 200) (i32.const 15))
    (call $write (local.get $at) (i32.sub (i32.const 100) (local.get $at)))
    (call $write (i32.const 240) (i32.const 1))))
