// Package score aggregates task verdicts into benchmark scores: success
// rate, the level-weighted score, breakdowns, statistics over repeated runs,
// milestone averages, and the CC-Score of action sequences with its BLEU.
package score

import (
	"math"
	"slices"
)

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

// CharBLEU is BLEU-4 over the characters of two strings, as CC-Score uses
// for typed text and key combinations. It equals BLEU on the strings' runes
// but counts n-grams by sorting packed keys instead of hashing, which is
// several times faster on the short strings it sees.
func CharBLEU(candidate, reference string) float64 {
	c, r := []rune(candidate), []rune(reference)
	const maxN = 4
	if len(c) < maxN || len(r) == 0 {
		return 0 // some order has no n-gram, so its precision is 0
	}
	cb := make([]charGram, 0, len(c))
	rb := make([]charGram, 0, len(r))
	logSum := 0.0
	for n := 1; n <= maxN; n++ {
		cb, rb = charGrams(c, n, cb), charGrams(r, n, rb)
		m := clippedMatches(cb, rb)
		if m == 0 {
			return 0
		}
		logSum += math.Log(float64(m) / float64(len(cb)))
	}
	bp := 1.0
	if len(c) < len(r) {
		bp = math.Exp(1 - float64(len(r))/float64(len(c)))
	}
	return bp * math.Exp(logSum/maxN)
}

// charGram packs up to four runes (21 bits each) into two words.
type charGram struct{ hi, lo uint64 }

func (a charGram) cmp(b charGram) int {
	switch {
	case a.hi < b.hi:
		return -1
	case a.hi > b.hi:
		return 1
	case a.lo < b.lo:
		return -1
	case a.lo > b.lo:
		return 1
	}
	return 0
}

// charGrams returns the sorted n-grams of r (n <= 4), reusing buf.
func charGrams(r []rune, n int, buf []charGram) []charGram {
	buf = buf[:0]
	for i := 0; i+n <= len(r); i++ {
		var g charGram
		for j := 0; j < n; j++ {
			v := uint64(r[i+j]) & 0x1FFFFF
			if j < 3 {
				g.hi |= v << (21 * j)
			} else {
				g.lo = v
			}
		}
		buf = append(buf, g)
	}
	slices.SortFunc(buf, charGram.cmp)
	return buf
}

// clippedMatches is the size of the multiset intersection of two sorted
// lists: each candidate n-gram counts at most as often as the reference has it.
func clippedMatches(c, r []charGram) int {
	i, j, m := 0, 0, 0
	for i < len(c) && j < len(r) {
		switch c[i].cmp(r[j]) {
		case 0:
			m++
			i++
			j++
		case -1:
			i++
		default:
			j++
		}
	}
	return m
}
