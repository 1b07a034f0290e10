;; A typed step component's core module, written against the canonical ABI of step.wit:
;; `execute(input)` gets the step's input as JSON text (a pointer and a length in linear
;; memory, copied in through `cabi_realloc`) and returns a pointer to a `result<string,string>`:
;; tag byte 0 and (ptr, len) of `{"typed": <input>}` when the input is a JSON object, tag 1 and
;; "expected a JSON object" otherwise. build.mjs embeds step.wit and makes it a component.
(module
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 4096))
  (data (i32.const 16) "{\"typed\":")
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
