package reproduce

import "fmt"

// paperSource names where every figure of the paper that calibrl prints
// comes from. It is the only source the project holds: the paper's summary
// (its abstract). A figure it does not give is "not reported", never a
// number remembered from elsewhere.
const paperSource = "the paper's summary (its abstract)"

// notReported stands where the source gives no figure.
const notReported = "not reported"

// paperFigures are the paper's results by task family and arm, as
// paperSource gives them: MATH-Chat accuracy (%). The summary gives no base
// figure, no MediumDocEdit-Chat figure and no model names.
var paperFigures = map[string]map[string]float64{
	"mathchat": {ArmStatic: 85.0, ArmNaive: 89.3, ArmCalibrated: 91.5, ArmOracle: 89.7},
}

// paperFigure is the paper's figure for arm on family, formatted, or
// notReported.
func paperFigure(family, arm string) string {
	if v, ok := paperFigures[family][arm]; ok {
		return fmt.Sprintf("%.1f", v)
	}
	return notReported
}

// paperPair is a claim's Paper cell: the paper's figures of the arm claimed
// better and of the other, each or both "not reported" where the source
// gives none.
func paperPair(family, better, worse string) string {
	b, w := paperFigure(family, better), paperFigure(family, worse)
	if b == notReported && w == notReported {
		return notReported
	}
	return b + " > " + w
}

// claimPaper is the Paper cell of the claim better > worse: the paper's
// figures, or why the paper has none for a claim it does not make.
func claimPaper(family, better, worse string) string {
	if note, ok := crossedNotes[[2]string{better, worse}]; ok {
		return note
	}
	switch {
	case better == ArmRecalibrated || worse == ArmRecalibrated, better == ArmRefitControl:
		return "not in the paper: online recalibration is its future work"
	case better == ArmOracle && worse == ArmBase:
		return "not in the paper: the check that RL works at all"
	case better == ArmFilteredBC || worse == ArmFilteredBC:
		return "not in the paper: the cheap alternative to RL"
	}
	return paperPair(family, better, worse)
}
