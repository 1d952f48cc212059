package reproduce

// rlArms are the RL arms of a run with the default settings (Arms less
// the base), the arms the tests of a default run expect curves for.
var rlArms = Arms[1:]
