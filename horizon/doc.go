// Package horizon measures how a training regime's gap to real users grows
// with the length H of the conversation, and checks it against the bounds the
// method rests on.
//
// # The bounds
//
// Number the turns t = 0 … H−1, so that H−t counts turn t and every turn
// after it. A policy trained only on expert (logged) states that errs with
// probability ε_t at turn t loses at most
//
//	gap_static ≤ R_max · Σ_t (H−t)·ε_t = O(H²ε)
//
// against the expert (Ross & Bagnell 2010, "Efficient Reductions for
// Imitation Learning", Theorem 2.1 in its per-step form Σ_t Σ_{i≤t} ε_i):
// once it is off the expert's distribution it has never seen the states it
// is in, so every later turn can be lost too. A policy trained on its own
// states (interactive, on-policy; DAgger's argument) recovers, so each error
// costs a bounded number of turns u and the gap is at most R_max·u·Σ_t ε_t =
// O(Hε). A simulator whose user reply opening turn t differs from the human's
// by total variation δ_t moves a fixed policy's objective by at most
// R_max · Σ_t (H−t)·δ_t = O(H²δ) (the simulation lemma, turn by turn).
//
// With turns numbered from 1 the same quantities read Σ_j (H−j+1)·ε_j; the
// form R_max·Σ_i (H−i)·ε_i written with i = 1 … H drops the erring turn
// itself and is beaten by the model below (an error on the last turn does
// cost that turn), which is why this package numbers turns from 0.
//
// # The synthetic study
//
// [Model] is a controlled dialogue MDP with no learning in the loop: the
// conversation is "on track", "off track" (for a policy that cannot recover),
// or "repairing" (for one that can); the expert keeps it on track at every
// turn; the learned policy's errors ε_t and the simulator's errors δ_t are
// injected exactly. The episode's return is R_max for every turn that ends on
// track, paid at the end of the conversation: a final reward that decays with
// the number of spoiled turns. That accounting is what the bounds measure: the
// (H−t) weight is the number of turns an error at t can spoil. A 0/1 reward for
// the final turn alone would cap every gap at R_max and erase the weighting (a
// static policy's gap would be P(any error) ≤ Σ ε_t, an interactive one's
// only ε_{H−1}), so the quadratic law is a statement about rewards that accrue
// over the conversation: outcome quality built turn by turn, as with facts
// gathered or edits made.
//
// [Model.Exact] computes a regime's expected return by dynamic programming
// over the state distribution; [Model.Sample] estimates it by Monte Carlo
// with a standard error, as a cross-check. [RunSynthetic] sweeps the horizon,
// fits log(gap) on log(H) by least squares ([FitLogLog]) and runs the
// position experiment (one error at turn i costs ∝ H−i).
//
// # The learned study
//
// The same fit, table and plot serve the learned-model study (the trained
// static, naive-interactive and calibrated-interactive arms evaluated against
// the human proxy at each H): it fills a [Series] per arm from evaluations
// instead of from [Model.Exact] and hands them to [FitLogLog], [GapPlot] and
// [figure.Write] ([RunLearned]). A slope does not check a bound, so each
// arm's gap is also set beside R_max·Σ_t (H−t)·δ_t from its own measured δ_t
// ([MeasuredBound], [BoundCheck], [BoundPlot]). [RunLearnedSeeds] runs the
// whole study once per top-level seed and pools the gaps over them.
package horizon
