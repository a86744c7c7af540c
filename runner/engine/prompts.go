package engine

import (
	"strconv"
	"strings"
)

// ShortQuestions are the six short fixed prompts of the server case.
var ShortQuestions = []string{
	"What is the capital of France?",
	"Explain in one sentence what a hash table is.",
	"List three prime numbers greater than ten.",
	"What does a GPU do in machine learning?",
	"Translate 'good morning' into Spanish.",
	"Why is the sky blue? Answer briefly.",
}

// vocabulary is the fixed 40-word vocabulary of filler documents.
var vocabulary = [40]string{
	"apple", "river", "stone", "cloud", "garden", "window", "silver", "forest",
	"engine", "paper", "market", "bridge", "candle", "harbor", "meadow", "pencil",
	"rocket", "saddle", "thunder", "valley", "winter", "yellow", "anchor", "basket",
	"castle", "desert", "feather", "glacier", "island", "jacket", "kettle", "lantern",
	"mirror", "needle", "orchard", "planet", "quartz", "ribbon", "summer", "tunnel",
}

// SummaryRequest ends every filler document.
const SummaryRequest = "Summarize the document above in one sentence."

// splitmix64 is a tiny PRNG with a fixed, documented sequence, so prompts are
// the same on every machine and Go version (math/rand makes no such promise
// across its versions).
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Words returns `Document #<seed>: ` followed by n pseudo-random words of the
// vocabulary, determined by seed alone.
func Words(seed, n int) string {
	var b strings.Builder
	b.Grow(12 + n*8)
	b.WriteString("Document #" + strconv.Itoa(seed) + ":")
	rng := splitmix64(uint64(seed))
	for range n {
		b.WriteByte(' ')
		b.WriteString(vocabulary[rng.next()%uint64(len(vocabulary))])
	}
	return b.String()
}

// Filler returns the filler document of seed with n words, ending with the
// request for a one-sentence summary. Distinct prompts must use distinct seeds.
func Filler(seed, n int) string {
	return Words(seed, n) + "\n\n" + SummaryRequest
}

// DocumentQuestion returns the document of seed with n words followed by
// question: prompts sharing a long prefix, for the prefix-cache phases.
func DocumentQuestion(seed, n int, question string) string {
	return Words(seed, n) + "\n\nQuestion: " + question
}
