// Package train holds calibrl's trainers: supervised fine-tuning on one
// role's tokens, interactive GRPO over whole conversations against a frozen
// user (with a greedy-conversation baseline or turn-level credit as
// options), static context RL on logged histories, and online
// rejection-sampling fine-tuning (RFT, StaticRFT) on either experience.
// The objectives they share (group-relative advantages, the clipped
// policy loss, the k3 KL estimator) are pure functions with their own
// tests.
package train
