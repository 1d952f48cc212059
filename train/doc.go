// Package train holds calibrl's trainers: supervised fine-tuning on one
// role's tokens, interactive GRPO over whole conversations against a frozen
// user, and static context RL on logged histories. The objectives they
// share (group-relative advantages, the clipped policy loss, the k3 KL
// estimator) are pure functions with their own tests.
package train
