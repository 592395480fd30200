(* Booleans: negation is an involution. *)
Lemma negb_negb : forall b : bool, negb (negb b) = b.
Proof.
  intros b. destruct b; reflexivity.
