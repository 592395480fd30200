(* Lists: the length of an append is the sum of the lengths. *)
Require Import List.
Import ListNotations.

Lemma length_app_sum : forall (A : Type) (l1 l2 : list A),
  length (l1 ++ l2) = length l1 + length l2.
Proof.
Admitted.
