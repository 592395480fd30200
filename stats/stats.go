// Package stats gives the statistics that make a score trustworthy over
// repeats and between runs: pass@k and pass^k of a task tried n times, a
// task's flip (mixed outcomes), a seedable percentile bootstrap over
// groups of observations for a weighted mean, a paired bootstrap for the
// difference of two runs over the same tasks, and McNemar's exact test on
// discordant pairs. It imports nothing of the project.
package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// PassAtK is the unbiased estimate of pass@k, the chance that at least one
// of k tries drawn from n tries with c successes succeeds:
// 1 − C(n−c, k)/C(n, k), computed as a product so that n of a few hundred
// neither overflows nor loses precision. ok is false when k is not in
// 1..n (there is no estimate from fewer than k tries) or c is not in 0..n.
func PassAtK(n, c, k int) (p float64, ok bool) {
	if k < 1 || k > n || c < 0 || c > n {
		return 0, false
	}
	if n-c < k {
		return 1, true // every choice of k tries holds a success
	}
	// C(n−c, k)/C(n, k) = Π_{i=n−c+1}^{n} (1 − k/i)
	q := 1.0
	for i := n - c + 1; i <= n; i++ {
		q *= 1 - float64(k)/float64(i)
	}
	return 1 - q, true
}

// PassHatK is pass^k, the chance that all of k tries drawn from n tries
// with c successes succeed: C(c, k)/C(n, k) = Π_{i<k} (c−i)/(n−i). ok is
// false as for PassAtK.
func PassHatK(n, c, k int) (p float64, ok bool) {
	if k < 1 || k > n || c < 0 || c > n {
		return 0, false
	}
	if c < k {
		return 0, true
	}
	p = 1
	for i := 0; i < k; i++ {
		p *= float64(c-i) / float64(n-i)
	}
	return p, true
}

// Flipped reports whether a task tried n times with c successes had mixed
// outcomes: it both succeeded and did not.
func Flipped(n, c int) bool { return c > 0 && c < n }

// Item is one observation for the bootstrap: a Value in [0, 1] (a success
// as 1, a milestone share) counted with a Weight (1 for a plain mean, a
// level's weight for a weighted score). Items of one Group (the instances
// of one task template, the repeats of one task) are not independent and
// are resampled together.
type Item struct {
	Group  string
	Value  float64
	Weight float64
}

// Pair is one group's observations in two runs over the same tasks: A and
// B are the group's (weighted) sums of values, W the sum of weights, the
// same in both runs.
type Pair struct {
	Group string
	A, B  float64
	W     float64
}

// Options are a bootstrap's settings. Resamples defaults to 2,000 and
// Confidence to 0.95; the same Seed gives the same interval.
type Options struct {
	Resamples  int
	Confidence float64
	Seed       uint64
}

func (o Options) norm() Options {
	if o.Resamples <= 0 {
		o.Resamples = 2000
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
	return o
}

// Interval is an estimate with its percentile bootstrap interval [Lo, Hi]
// at the Confidence asked, over Groups resampled groups. A zero Groups
// means there was nothing to estimate.
type Interval struct {
	Estimate   float64 `json:"estimate"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	Groups     int     `json:"groups"`
}

// OK reports whether there was anything to estimate.
func (iv Interval) OK() bool { return iv.Groups > 0 }

// cluster is a group's weighted sum and weight.
type cluster struct{ sum, w float64 }

// groupBy sums items per group, in the order of the groups' names so that
// a seed gives the same interval whatever order the items came in.
func groupBy(items []Item) []cluster {
	by := map[string]*cluster{}
	var names []string
	for _, it := range items {
		c := by[it.Group]
		if c == nil {
			c = &cluster{}
			by[it.Group] = c
			names = append(names, it.Group)
		}
		c.sum += it.Weight * it.Value
		c.w += it.Weight
	}
	slices.Sort(names)
	out := make([]cluster, len(names))
	for i, n := range names {
		out[i] = *by[n]
	}
	return out
}

// Bootstrap estimates the weighted mean Σ w·v / Σ w of the items with a
// percentile bootstrap: the groups are drawn with replacement as many
// times as there are groups, Resamples times, and the interval is the
// middle Confidence of the resampled means.
func Bootstrap(items []Item, o Options) Interval {
	o = o.norm()
	cs := groupBy(items)
	iv := Interval{Confidence: o.Confidence, Groups: len(cs)}
	if len(cs) == 0 {
		return iv
	}
	var sum, weight float64
	for _, c := range cs {
		sum, weight = sum+c.sum, weight+c.w
	}
	if weight == 0 {
		iv.Groups = 0
		return iv
	}
	iv.Estimate = sum / weight
	rng := rand.New(rand.NewPCG(o.Seed, 0x70726f63746f72)) // "proctor"
	draws := make([]float64, 0, o.Resamples)
	for range o.Resamples {
		var s, w float64
		for range cs {
			c := cs[rng.IntN(len(cs))]
			s, w = s+c.sum, w+c.w
		}
		if w > 0 {
			draws = append(draws, s/w)
		}
	}
	iv.Lo, iv.Hi = percentiles(draws, o.Confidence, iv.Estimate)
	return iv
}

// PairedBootstrap estimates the difference of two runs' weighted means
// over the same groups, Σ B / Σ W − Σ A / Σ W, resampling the groups
// together in both runs so that what the runs share cancels out.
func PairedBootstrap(pairs []Pair, o Options) Interval {
	o = o.norm()
	ps := slices.Clone(pairs)
	slices.SortStableFunc(ps, func(a, b Pair) int { return cmp.Compare(a.Group, b.Group) })
	iv := Interval{Confidence: o.Confidence, Groups: len(ps)}
	if len(ps) == 0 {
		return iv
	}
	var a, b, w float64
	for _, p := range ps {
		a, b, w = a+p.A, b+p.B, w+p.W
	}
	if w == 0 {
		iv.Groups = 0
		return iv
	}
	iv.Estimate = (b - a) / w
	rng := rand.New(rand.NewPCG(o.Seed, 0x70726f63746f72))
	draws := make([]float64, 0, o.Resamples)
	for range o.Resamples {
		var d, dw float64
		for range ps {
			p := ps[rng.IntN(len(ps))]
			d, dw = d+p.B-p.A, dw+p.W
		}
		if dw > 0 {
			draws = append(draws, d/dw)
		}
	}
	iv.Lo, iv.Hi = percentiles(draws, o.Confidence, iv.Estimate)
	return iv
}

// percentiles is the middle conf of the draws, by linear interpolation
// between order statistics; the estimate itself when there are no draws.
func percentiles(draws []float64, conf, est float64) (lo, hi float64) {
	if len(draws) == 0 {
		return est, est
	}
	slices.Sort(draws)
	at := func(q float64) float64 {
		x := q * float64(len(draws)-1)
		i := int(math.Floor(x))
		if i >= len(draws)-1 {
			return draws[len(draws)-1]
		}
		return draws[i] + (x-float64(i))*(draws[i+1]-draws[i])
	}
	a := (1 - conf) / 2
	return at(a), at(1 - a)
}

// McNemarExact is the two-sided p-value of McNemar's exact test for two
// runs over the same tasks: b tasks passed by the first run only, c by the
// second only. Under the null hypothesis each discordant task is equally
// likely either way, so min(b, c) is binomial(b+c, ½); the p-value is
// twice its lower tail, at most 1 (1 when there is no discordant task).
func McNemarExact(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	m := min(b, c)
	var tail float64
	if n <= 1000 { // C(n,i)/2ⁿ term by term, exact enough and no underflow
		term := math.Ldexp(1, -n)
		for i := 0; i <= m; i++ {
			tail += term
			term *= float64(n-i) / float64(i+1)
		}
		return min(1, 2*tail)
	}
	ln2 := math.Log(2)
	lgn, _ := math.Lgamma(float64(n + 1))
	for i := 0; i <= m; i++ {
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		tail += math.Exp(lgn - li - lr - float64(n)*ln2)
	}
	return min(1, 2*tail)
}
