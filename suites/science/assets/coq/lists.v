(* Lists: appending the empty list changes nothing. *)
Require Import List.
Import ListNotations.

Lemma app_nil_right : forall (A : Type) (l : list A), l ++ [] = l.
Proof.
Admitted.
