(* count_divisors n counts the numbers d in 1..n that divide n. *)
Require Import List.

Definition count_divisors (n : nat) : nat :=
  length (filter (fun d => Nat.eqb (Nat.modulo n d) 0) (seq 1 n)).
