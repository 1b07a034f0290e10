;; Fraud rules of the POS example (pos_payment.yaml), a WASI command module written by hand in
;; WebAssembly text so the example needs no C toolchain. Build it with
;;   node examples/pos/build-fraud-rules.mjs
;; which prints the SHA-256 that `wasm_config.wasm_hash` names.
;;
;; Contract (spec: WASM module contract): reads one JSON object on stdin,
;;   {"amount_minor": <integer>, "attempts_last_hour": <integer, optional>}
;; writes {"fraud_score": <0..100>, "fraud_decision": "approve" | "review" | "decline"} and exits 0.
;; No numeric amount_minor: a reason on stderr and exit code 2.
;;
;; The rules: an amount over 1,000.00 scores 40, over 200.00 scores 20; every card attempt in
;; the last hour scores 10 (at most 60). A score of 70 or more declines, 30 or more asks the
;; cashier to review, anything less approves.
;;
;; Memory: 0..16 iovec scratch, 64..96 digits, 256.. string literals, 4096.. the input.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 2)
  (data (i32.const 256) "\22amount_minor\22") ;; amount_key, 14 bytes
  (data (i32.const 272) "\22attempts_last_hour\22") ;; attempts_key, 20 bytes
  (data (i32.const 304) "{\22fraud_score\22:") ;; out_score, 15 bytes
  (data (i32.const 320) ",\22fraud_decision\22:\22") ;; out_decision, 19 bytes
  (data (i32.const 352) "\22}") ;; out_end, 2 bytes
  (data (i32.const 368) "approve") ;; approve, 7 bytes
  (data (i32.const 384) "review") ;; review, 6 bytes
  (data (i32.const 400) "decline") ;; decline, 7 bytes
  (data (i32.const 416) "fraud_rules: the input has no numeric amount_minor\0a") ;; no_amount, 51 bytes

  ;; write len bytes at ptr to file descriptor fd
  (func $write (param $fd i32) (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8))))

  ;; write n in decimal to stdout
  (func $write_u32 (param $n i32) (local $at i32)
    (local.set $at (i32.const 96))
    (loop $digit
      (local.set $at (i32.sub (local.get $at) (i32.const 1)))
      (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $digit (local.get $n)))
    (call $write (i32.const 1) (local.get $at) (i32.sub (i32.const 96) (local.get $at))))

  ;; read all of stdin (up to 60 KiB) to 4096; returns its length
  (func $read_stdin (result i32) (local $total i32)
    (block $done
      (loop $more
        (br_if $done (i32.ge_u (local.get $total) (i32.const 61440)))
        (i32.store (i32.const 0) (i32.add (i32.const 4096) (local.get $total)))
        (i32.store (i32.const 4) (i32.sub (i32.const 61440) (local.get $total)))
        (br_if $done (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (br_if $done (i32.eqz (i32.load (i32.const 8))))
        (local.set $total (i32.add (local.get $total) (i32.load (i32.const 8))))
        (br $more)))
    (local.get $total))

  ;; the address just after the first occurrence of the klen bytes at key in the input
  ;; (4096 .. end), or -1
  (func $find (param $key i32) (param $klen i32) (param $end i32) (result i32)
    (local $i i32) (local $j i32)
    (local.set $i (i32.const 4096))
    (block $absent
      (loop $scan
        (br_if $absent (i32.gt_u (i32.add (local.get $i) (local.get $klen)) (local.get $end)))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $compare
            (if (i32.eq (local.get $j) (local.get $klen))
              (then (return (i32.add (local.get $i) (local.get $klen)))))
            (br_if $mismatch
              (i32.ne (i32.load8_u (i32.add (local.get $i) (local.get $j)))
                      (i32.load8_u (i32.add (local.get $key) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $compare)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (i32.const -1))

  ;; skip blanks at p; returns the first other address (at most end)
  (func $blanks (param $p i32) (param $end i32) (result i32) (local $c i32)
    (block $stop
      (loop $more
        (br_if $stop (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $p)))
        (br_if $stop (i32.and (i32.ne (local.get $c) (i32.const 32))
          (i32.and (i32.ne (local.get $c) (i32.const 9))
            (i32.and (i32.ne (local.get $c) (i32.const 10)) (i32.ne (local.get $c) (i32.const 13))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $more)))
    (local.get $p))

  ;; the non-negative integer value after the key that ends at p (blanks, ':', blanks, digits),
  ;; or -1 when there is none
  (func $value (param $p i32) (param $end i32) (result i64) (local $n i64) (local $digits i32) (local $c i32)
    (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (i64.const -1))))
    (local.set $p (call $blanks (local.get $p) (local.get $end)))
    (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i64.const -1))))
    (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 58)) (then (return (i64.const -1))))
    (local.set $p (call $blanks (i32.add (local.get $p) (i32.const 1)) (local.get $end)))
    (block $stop
      (loop $more
        (br_if $stop (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (i32.sub (i32.load8_u (local.get $p)) (i32.const 48)))
        (br_if $stop (i32.gt_u (local.get $c) (i32.const 9)))
        (br_if $stop (i32.ge_u (local.get $digits) (i32.const 15)))
        (local.set $n (i64.add (i64.mul (local.get $n) (i64.const 10)) (i64.extend_i32_u (local.get $c))))
        (local.set $digits (i32.add (local.get $digits) (i32.const 1)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $more)))
    (if (result i64) (local.get $digits) (then (local.get $n)) (else (i64.const -1))))

  (func (export "_start")
    (local $end i32) (local $amount i64) (local $attempts i64) (local $score i32)
    (local.set $end (i32.add (i32.const 4096) (call $read_stdin)))
    (local.set $amount
      (call $value (call $find (i32.const 256) (i32.const 14) (local.get $end)) (local.get $end)))
    (if (i64.lt_s (local.get $amount) (i64.const 0))
      (then
        (call $write (i32.const 2) (i32.const 416) (i32.const 51))
        (call $proc_exit (i32.const 2))))
    (local.set $attempts
      (call $value (call $find (i32.const 272) (i32.const 20) (local.get $end)) (local.get $end)))
    (if (i64.gt_s (local.get $amount) (i64.const 100000))
      (then (local.set $score (i32.const 40)))
      (else (if (i64.gt_s (local.get $amount) (i64.const 20000))
        (then (local.set $score (i32.const 20))))))
    (if (i64.gt_s (local.get $attempts) (i64.const 0))
      (then (local.set $score (i32.add (local.get $score)
        (if (result i32) (i64.ge_s (local.get $attempts) (i64.const 6))
          (then (i32.const 60))
          (else (i32.mul (i32.wrap_i64 (local.get $attempts)) (i32.const 10))))))))
    (call $write (i32.const 1) (i32.const 304) (i32.const 15))
    (call $write_u32 (local.get $score))
    (call $write (i32.const 1) (i32.const 320) (i32.const 19))
    (if (i32.ge_u (local.get $score) (i32.const 70))
      (then (call $write (i32.const 1) (i32.const 400) (i32.const 7)))
      (else (if (i32.ge_u (local.get $score) (i32.const 30))
        (then (call $write (i32.const 1) (i32.const 384) (i32.const 6)))
        (else (call $write (i32.const 1) (i32.const 368) (i32.const 7))))))
    (call $write (i32.const 1) (i32.const 352) (i32.const 2))))
