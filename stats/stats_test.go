package stats

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// binom is C(n, k) exactly, as a float, for the closed forms.
func binom(n, k int) *big.Float {
	if k < 0 || k > n {
		return new(big.Float)
	}
	return new(big.Float).SetInt(new(big.Int).Binomial(int64(n), int64(k)))
}

func quo(a, b *big.Float) float64 {
	f, _ := new(big.Float).Quo(a, b).Float64()
	return f
}

func TestPassAtKAndPassHatK(t *testing.T) {
	tests := []struct {
		n, c, k   int
		atK, hatK float64 // by hand; -1 to take the closed form only
		ok        bool
	}{
		{5, 2, 3, 0.9, 0, true},                  // 1 − C(3,3)/C(5,3) = 1 − 1/10; C(2,3) = 0
		{10, 5, 2, 1 - 10.0/45, 10.0 / 45, true}, // C(5,2)/C(10,2) either way
		{5, 5, 5, 1, 1, true},
		{5, 0, 1, 0, 0, true},
		{3, 1, 1, 1.0 / 3, 1.0 / 3, true}, // k = 1: both are c/n
		{4, 3, 2, 1, 0.5, true},           // C(1,2) = 0; C(3,2)/C(4,2) = 3/6
		{5, 2, 6, 0, 0, false},            // k > n: no estimate
		{5, 2, 0, 0, 0, false},
		{5, 6, 1, 0, 0, false},
		{200, 37, 10, -1, -1, true},
		{300, 150, 50, -1, -1, true},
		{300, 290, 100, -1, -1, true},
		{250, 1, 5, -1, -1, true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("n%d c%d k%d", tc.n, tc.c, tc.k), func(t *testing.T) {
			at, ok1 := PassAtK(tc.n, tc.c, tc.k)
			hat, ok2 := PassHatK(tc.n, tc.c, tc.k)
			if ok1 != tc.ok || ok2 != tc.ok {
				t.Fatalf("ok %v %v, want %v", ok1, ok2, tc.ok)
			}
			if !tc.ok {
				return
			}
			cn := binom(tc.n, tc.k)
			wantAt := 1 - quo(binom(tc.n-tc.c, tc.k), cn)
			wantHat := quo(binom(tc.c, tc.k), cn)
			if !near(at, wantAt, 1e-12) || !near(hat, wantHat, 1e-12) {
				t.Errorf("pass@k %v pass^k %v; closed forms %v %v", at, hat, wantAt, wantHat)
			}
			if tc.atK >= 0 && (!near(at, tc.atK, 1e-12) || !near(hat, tc.hatK, 1e-12)) {
				t.Errorf("pass@k %v pass^k %v; by hand %v %v", at, hat, tc.atK, tc.hatK)
			}
			if hat > at+1e-15 {
				t.Errorf("pass^k %v above pass@k %v", hat, at)
			}
		})
	}
}

func TestFlipped(t *testing.T) {
	for _, tc := range []struct {
		n, c int
		want bool
	}{{5, 0, false}, {5, 5, false}, {5, 1, true}, {2, 1, true}, {1, 1, false}, {0, 0, false}} {
		if got := Flipped(tc.n, tc.c); got != tc.want {
			t.Errorf("Flipped(%d, %d) = %v", tc.n, tc.c, got)
		}
	}
}

// TestMcNemarExact against tables computed by hand: with n = b + c
// discordant tasks, p = 2·Σ_{i≤min(b,c)} C(n,i)/2ⁿ, at most 1.
func TestMcNemarExact(t *testing.T) {
	for _, tc := range []struct {
		b, c int
		want float64
	}{
		{0, 0, 1},
		{0, 5, 2.0 / 32},            // 2·(1/32)
		{5, 0, 2.0 / 32},            // symmetric
		{1, 9, 2 * 11.0 / 1024},     // 2·(1 + 10)/1024
		{2, 8, 2 * 56.0 / 1024},     // 2·(1 + 10 + 45)/1024
		{5, 14, 2 * 0.031784057617}, // 2·(1+19+171+969+3876+11628)/2¹⁹ = 2·16664/524288
		{5, 5, 1},                   // 2·638/1024 > 1
		{0, 1, 1},
		{3, 4, 1},
	} {
		if got := McNemarExact(tc.b, tc.c); !near(got, tc.want, 1e-9) {
			t.Errorf("McNemarExact(%d, %d) = %.10f, want %.10f", tc.b, tc.c, got, tc.want)
		}
	}
	// A large table stays finite and tiny.
	if p := McNemarExact(10, 300); !(p > 0 && p < 1e-60) {
		t.Errorf("McNemarExact(10, 300) = %g", p)
	}
	// Past 1,000 discordant tasks the tail is summed in logarithms: an
	// even split is not significant, a lopsided one is.
	if p := McNemarExact(600, 600); p != 1 {
		t.Errorf("McNemarExact(600, 600) = %g", p)
	}
	if p := McNemarExact(500, 700); !(p > 0 && p < 1e-7) {
		t.Errorf("McNemarExact(500, 700) = %g", p)
	}
}

// TestBootstrapCoverage: the 95 % interval of a Bernoulli agent's success
// rate over 100 tasks (50 templates of 2 instances) covers the true rate
// in 93–97 % of 1,000 simulated runs.
func TestBootstrapCoverage(t *testing.T) {
	const runs, templates, instances, truth = 1000, 50, 2, 0.7
	sim := rand.New(rand.NewPCG(1, 2))
	covered := 0
	items := make([]Item, 0, templates*instances)
	for r := range runs {
		items = items[:0]
		for g := range templates {
			for range instances {
				v := 0.0
				if sim.Float64() < truth {
					v = 1
				}
				items = append(items, Item{Group: fmt.Sprint(g), Value: v, Weight: 1})
			}
		}
		iv := Bootstrap(items, Options{Resamples: 1000, Seed: uint64(r)})
		if iv.Lo <= truth && truth <= iv.Hi {
			covered++
		}
	}
	if rate := float64(covered) / runs; rate < 0.93 || rate > 0.97 {
		t.Fatalf("the 95%% interval covered the true rate in %.1f%% of runs", 100*rate)
	} else {
		t.Logf("coverage %.1f%%", 100*rate)
	}
}

// TestBootstrapGroups: instances of one template are resampled together,
// so a template's shared fate widens the interval, as it should; the same
// seed gives the same interval whatever order the items came in.
func TestBootstrapGroups(t *testing.T) {
	var together, apart []Item
	for g := range 10 {
		for i := range 10 {
			v := float64(g % 2) // half the templates pass in every instance
			together = append(together, Item{Group: fmt.Sprint(g), Value: v, Weight: 1})
			apart = append(apart, Item{Group: fmt.Sprint(g, "/", i), Value: v, Weight: 1})
		}
	}
	o := Options{Seed: 7}
	a, b := Bootstrap(together, o), Bootstrap(apart, o)
	if a.Estimate != 0.5 || b.Estimate != 0.5 || a.Groups != 10 || b.Groups != 100 {
		t.Fatalf("estimates %+v %+v", a, b)
	}
	if wa, wb := a.Hi-a.Lo, b.Hi-b.Lo; wa < 2*wb {
		t.Errorf("10 templates of 10 alike: width %.3f; 100 independent tasks: %.3f", wa, wb)
	}
	rev := make([]Item, len(together))
	for i, it := range together {
		rev[len(rev)-1-i] = it
	}
	if again := Bootstrap(rev, o); again != a {
		t.Errorf("the same seed gave %+v, then %+v", a, again)
	}
	var shares []Item
	for i := range 30 {
		shares = append(shares, Item{Group: fmt.Sprint(i), Value: float64(i*i%17) / 17, Weight: 1})
	}
	if x, y := Bootstrap(shares, Options{Seed: 7}), Bootstrap(shares, Options{Seed: 8}); x == y {
		t.Errorf("another seed gave the same interval %+v", x)
	}
	// Weights: a weighted mean of one heavy pass and one light failure.
	w := Bootstrap([]Item{{"a", 1, 8}, {"b", 0, 1}}, o)
	if !near(w.Estimate, 8.0/9, 1e-12) || w.Lo != 0 || w.Hi != 1 || w.Confidence != 0.95 {
		t.Errorf("weighted %+v", w)
	}
	if z := Bootstrap(nil, o); z.OK() {
		t.Errorf("nothing to estimate gave %+v", z)
	}
}

func TestPairedBootstrap(t *testing.T) {
	same := []Pair{{"a", 1, 1, 1}, {"b", 0, 0, 1}, {"c", 1, 1, 1}}
	if iv := PairedBootstrap(same, Options{Seed: 1}); iv.Estimate != 0 || iv.Lo != 0 || iv.Hi != 0 {
		t.Errorf("identical runs: %+v", iv)
	}
	better := []Pair{{"a", 0, 1, 1}, {"b", 0, 1, 1}}
	if iv := PairedBootstrap(better, Options{Seed: 1}); iv.Estimate != 1 || iv.Lo != 1 || iv.Hi != 1 {
		t.Errorf("B passes all A fails: %+v", iv)
	}
	// 20 tasks: B wins 6, loses 2, ties 12. The estimate is 4/20; pairing
	// makes the interval narrower than two unpaired ones would allow.
	var ps []Pair
	for i := range 20 {
		p := Pair{Group: fmt.Sprint(i), W: 1}
		switch {
		case i < 6:
			p.B = 1
		case i < 8:
			p.A = 1
		case i < 14:
			p.A, p.B = 1, 1
		}
		ps = append(ps, p)
	}
	iv := PairedBootstrap(ps, Options{Seed: 3, Confidence: 0.9})
	if !near(iv.Estimate, 0.2, 1e-12) || iv.Lo > 0.2 || iv.Hi < 0.2 || iv.Lo < -0.2 || iv.Hi > 0.5 || iv.Confidence != 0.9 {
		t.Errorf("paired %+v", iv)
	}
	if again := PairedBootstrap(ps, Options{Seed: 3, Confidence: 0.9}); again != iv {
		t.Errorf("not reproducible: %+v then %+v", iv, again)
	}
}
