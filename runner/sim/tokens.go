package sim

import (
	"hash/fnv"
	"strings"
)

// vocabSize is the simulated tokenizer's vocabulary (Qwen2's size).
const vocabSize = 151936

// tokenize turns a prompt into token ids, one per whitespace-separated word:
// the same word always gets the same id.
func tokenize(prompt string) []int {
	words := strings.Fields(prompt)
	ids := make([]int, len(words))
	for i, w := range words {
		h := fnv.New64a()
		h.Write([]byte(w))
		ids[i] = int(h.Sum64()%(vocabSize-1000)) + 1000
	}
	return ids
}

// splitmix64 is a small, well-mixed hash step.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func promptSeed(ids []int) uint64 {
	s := uint64(len(ids))
	for _, id := range ids {
		s = splitmix64(s ^ uint64(id))
	}
	return s
}

// wrongTokensMinPrompt is the prompt length from which the wrong-tokens fault
// corrupts a kvcached server's output: the filler documents and the apc
// document, not the six short questions.
const wrongTokensMinPrompt = 200

// generate returns the greedy completion of prompt ids, a pure function of the
// prompt so every server agrees; without ignoreEOS it stops at an EOS fixed
// by the prompt, never past maxTokens. wrong makes the wrong-tokens fault's
// divergence (from the fourth token on).
func generate(ids []int, maxTokens int, ignoreEOS, wrong bool) (out []int, finishedByStop bool) {
	seed := promptSeed(ids)
	n := max(maxTokens, 0)
	if eos := 24 + int(seed%200); !ignoreEOS && eos < n {
		n, finishedByStop = eos, true
	}
	out = make([]int, n)
	for i := range out {
		out[i] = int(splitmix64(seed+uint64(i)) % vocabSize)
		if wrong && i >= 3 {
			out[i] = (out[i] + 7 + i) % vocabSize
		}
	}
	return out, finishedByStop
}

var outWords = strings.Fields(`the model cache memory page token request server answer short long blue green
red quick slow prefix block engine kernel tensor layer batch queue stream value index river stone cloud light
north south east west small large early late first last open close north`)

// detokenize renders token ids as text, one word per token.
func detokenize(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteByte(' ')
		b.WriteString(outWords[id%len(outWords)])
	}
	return b.String()
}
