package train

import "github.com/calibrl/calibrl/rollout"

// Every random draw of training derives from the config's Seed and one of
// these constants, which keeps the draws of different purposes apart and
// lets a resumed run replay exactly the iterations it missed. Most spell
// their purpose in ASCII. Changing one changes every run's figures.
const (
	// seedIteration is XORed into Seed before an RL iteration's seed is
	// mixed from it (iterSeed): "grp0".
	seedIteration = 0x67727030
	// seedMonitor is XORed into Seed for the monitor's episodes, the same
	// ones at every reading: "monitor".
	seedMonitor = 0x6d6f6e69746f72
	// seedHacking is XORed into Seed for the hacking metrics' episodes,
	// the same ones at every reading: "hacking".
	seedHacking = 0x6861636b696e67
	// streamMinibatch is the PCG stream, beside the iteration's seed, of
	// the iteration's minibatch order: "mb". It is even; the static
	// candidates' streams are odd (staticRun.batch).
	streamMinibatch = 0x6d62
	// streamStaticEpoch, plus the epoch, is the PCG stream of static RL's
	// prompt order in that epoch: "sta".
	streamStaticEpoch = 0x737461
	// sampleStaticSim is the sample index from which, with the iteration's
	// seed and the prompt, rollout.EpisodeSeed mixes the seed that a
	// static prompt's G completions share (common random numbers): "sim".
	sampleStaticSim = 0x73696d
	// streamSFTSplit is the PCG stream of SFT's held-out split.
	streamSFTSplit = 0x5f7
	// streamBenchWeights is the PCG stream of the benchmark models' random
	// weights: "benc".
	streamBenchWeights = 0x62656e63
)

// iterSeed is iteration it's seed: episodes and minibatch order of an
// iteration depend only on (Seed, it), so a resumed run replays them.
func iterSeed(seed uint64, it int) uint64 {
	return rollout.EpisodeSeed(seed^seedIteration, it, 0)
}
