package horizon

import (
	"errors"
	"fmt"
	"math"

	"github.com/calibrl/calibrl/metric"
)

// Fit is the least-squares line y = Intercept + Slope·x, with the slope's
// standard error and two-sided confidence interval [SlopeLo, SlopeHi] from
// Student's t with N−2 degrees of freedom. On log(gap) against log(H) the
// slope is the growth exponent: 2 for O(H²), 1 for O(H).
type Fit struct {
	Slope     float64 `json:"slope"`
	Intercept float64 `json:"intercept"`
	SlopeSE   float64 `json:"slope_se"`
	SlopeLo   float64 `json:"slope_lo"`
	SlopeHi   float64 `json:"slope_hi"`
	Level     float64 `json:"level"`
	N         int     `json:"n"`
}

// FitLine fits y on x by ordinary least squares. level is the confidence
// level of the slope's interval, in (0, 1). It needs at least three points,
// so that the residual variance has a degree of freedom, and x not all equal.
func FitLine(x, y []float64, level float64) (Fit, error) {
	n := len(x)
	if n != len(y) {
		return Fit{}, fmt.Errorf("horizon: fit: %d x values, %d y values", n, len(y))
	}
	if n < 3 {
		return Fit{}, fmt.Errorf("horizon: fit: %d points, need at least 3 for a confidence interval", n)
	}
	if !(level > 0 && level < 1) {
		return Fit{}, fmt.Errorf("horizon: fit: confidence level %v must lie in (0, 1)", level)
	}
	var mx, my float64
	for i := range x {
		if math.IsNaN(x[i]) || math.IsInf(x[i], 0) || math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return Fit{}, fmt.Errorf("horizon: fit: point %d (%v, %v) is not finite", i, x[i], y[i])
		}
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, sxy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
	}
	if sxx == 0 {
		return Fit{}, errors.New("horizon: fit: all x values are equal")
	}
	f := Fit{Slope: sxy / sxx, Level: level, N: n}
	f.Intercept = my - f.Slope*mx
	var ssr float64
	for i := range x {
		r := y[i] - f.Intercept - f.Slope*x[i]
		ssr += r * r
	}
	df := float64(n - 2)
	f.SlopeSE = math.Sqrt(ssr / df / sxx)
	half := metric.StudentTQuantile(0.5+level/2, df) * f.SlopeSE
	f.SlopeLo, f.SlopeHi = f.Slope-half, f.Slope+half
	return f, nil
}

// FitLogLog fits log(gap) on log(H) with a 95% interval on the slope. Every
// H and gap must be positive.
func FitLogLog(h []int, gap []float64) (Fit, error) {
	if len(h) != len(gap) {
		return Fit{}, fmt.Errorf("horizon: log-log fit: %d horizons, %d gaps", len(h), len(gap))
	}
	x := make([]float64, len(h))
	y := make([]float64, len(h))
	for i := range h {
		if h[i] <= 0 || !(gap[i] > 0) {
			return Fit{}, fmt.Errorf("horizon: log-log fit: H=%d gap=%v: both must be positive", h[i], gap[i])
		}
		x[i] = math.Log(float64(h[i]))
		y[i] = math.Log(gap[i])
	}
	return FitLine(x, y, 0.95)
}

// Pearson is the sample correlation of x and y. Neither may be constant.
func Pearson(x, y []float64) (float64, error) {
	n := len(x)
	if n != len(y) || n < 2 {
		return 0, fmt.Errorf("horizon: correlation: need two equal-length series of at least 2 points, got %d and %d", n, len(y))
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, syy, sxy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxx += dx * dx
		syy += dy * dy
		sxy += dx * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, errors.New("horizon: correlation: a series is constant")
	}
	return sxy / math.Sqrt(sxx*syy), nil
}
