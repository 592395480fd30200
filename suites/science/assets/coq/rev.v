(* Lists: reversal distributes over append (with the order swapped),
   and reversing twice gives the list back. *)
Require Import List.
Import ListNotations.

Lemma rev_app_distrib : forall (A : Type) (l1 l2 : list A),
  rev (l1 ++ l2) = rev l2 ++ rev l1.
Proof.
Admitted.

Lemma rev_involutive_list : forall (A : Type) (l : list A), rev (rev l) = l.
Proof.
Admitted.
