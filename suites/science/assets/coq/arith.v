(* Addition on the natural numbers: zero is a right identity. *)
Lemma add_zero_right : forall n : nat, n + 0 = n.
Proof.
Admitted.
