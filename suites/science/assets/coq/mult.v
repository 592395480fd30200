(* Multiplication on the natural numbers: one is a right identity. *)
Lemma mul_one_right : forall n : nat, n * 1 = n.
Proof.
Admitted.
