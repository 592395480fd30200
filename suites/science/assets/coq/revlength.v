(* Lists: reversing a list keeps its length. *)
Require Import List.
Import ListNotations.

Lemma rev_length_eq : forall (A : Type) (l : list A), length (rev l) = length l.
Proof.
Admitted.
