(* The Collatz map: halve an even number, send an odd one to 3n + 1.
   steps n counts the applications needed to reach 1 from n. *)
Fixpoint collatz_steps (fuel n : nat) : nat :=
  match fuel with
  | 0 => 0
  | S f => if Nat.eqb n 1 then 0
           else S (collatz_steps f (if Nat.even n then Nat.div2 n else 3 * n + 1))
  end.

Definition steps (n : nat) : nat := collatz_steps 1000 n.
