(* double n adds n to itself, one successor at a time. *)
Fixpoint double (n : nat) : nat :=
  match n with
  | 0 => 0
  | S k => S (S (double k))
  end.

Lemma double_add : forall n : nat, double n = n + n.
Proof.
Admitted.
