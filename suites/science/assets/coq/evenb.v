(* evenb decides whether a natural number is even. *)
Fixpoint evenb (n : nat) : bool :=
  match n with
  | 0 => true
  | 1 => false
  | S (S k) => evenb k
  end.

Lemma evenb_double : forall n : nat, evenb (n + n) = true.
Proof.
Admitted.
