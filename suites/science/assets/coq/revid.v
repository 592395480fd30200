(* A claim about list reversal. *)
Require Import List.

Lemma rev_identity : forall l : list nat, rev l = l.
Proof.
Admitted.
