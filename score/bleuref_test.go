package score

import "math"

// The general BLEU below is the reference the tests check CharBLEU
// against (and check against NLTK's published figures); the harness itself
// scores typed text with CharBLEU only.

// BLEU computes the BLEU score (Papineni et al., 2002) of one candidate
// against one or more references, with n-grams up to maxN, uniform weights,
// clipped counts, and the brevity penalty against the reference whose length
// is closest to the candidate's (the shorter on a tie). Without smoothing, a
// candidate with no matching n-gram of some order scores 0.
func BLEU[T comparable](candidate []T, references [][]T, maxN int) float64 {
	return CorpusBLEU([][]T{candidate}, [][][]T{references}, maxN)
}

// CorpusBLEU computes corpus-level BLEU: n-gram matches and lengths are
// summed over all candidates before the precisions are combined.
func CorpusBLEU[T comparable](candidates [][]T, references [][][]T, maxN int) float64 {
	if maxN < 1 || maxN > MaxOrder || len(candidates) == 0 || len(candidates) != len(references) {
		return 0
	}
	ids := map[T]uint32{}
	intern := func(seq []T) []uint32 {
		out := make([]uint32, len(seq))
		for i, t := range seq {
			id, ok := ids[t]
			if !ok {
				id = uint32(len(ids))
				ids[t] = id
			}
			out[i] = id
		}
		return out
	}
	match := make([]int, maxN)
	total := make([]int, maxN)
	candLen, refLen := 0, 0
	for i, c := range candidates {
		cand := intern(c)
		refs := make([][]uint32, len(references[i]))
		for j, r := range references[i] {
			refs[j] = intern(r)
		}
		candLen += len(cand)
		refLen += closestRefLen(len(cand), refs)
		for n := 1; n <= maxN; n++ {
			counts := ngrams(cand, n)
			maxRef := map[gram]int{}
			for _, r := range refs {
				for g, c := range ngrams(r, n) {
					if c > maxRef[g] {
						maxRef[g] = c
					}
				}
			}
			for g, c := range counts {
				match[n-1] += min(c, maxRef[g])
				total[n-1] += c
			}
		}
	}
	if candLen == 0 {
		return 0
	}
	logSum := 0.0
	for n := 0; n < maxN; n++ {
		if match[n] == 0 || total[n] == 0 {
			return 0
		}
		logSum += math.Log(float64(match[n]) / float64(total[n]))
	}
	bp := 1.0
	if candLen < refLen {
		bp = math.Exp(1 - float64(refLen)/float64(candLen))
	}
	return bp * math.Exp(logSum/float64(maxN))
}

func closestRefLen(c int, refs [][]uint32) int {
	best := -1
	for _, r := range refs {
		d, bd := abs(len(r)-c), abs(best-c)
		if best < 0 || d < bd || d == bd && len(r) < best {
			best = len(r)
		}
	}
	return max(best, 0)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// MaxOrder is the longest n-gram BLEU counts.
const MaxOrder = 8

// gram is an n-gram of interned token ids.
type gram struct {
	n   int
	ids [MaxOrder]uint32
}

// ngrams counts the n-grams of seq.
func ngrams(seq []uint32, n int) map[gram]int {
	out := make(map[gram]int, max(len(seq)-n+1, 0))
	for i := 0; i+n <= len(seq); i++ {
		g := gram{n: n}
		copy(g.ids[:], seq[i:i+n])
		out[g]++
	}
	return out
}
