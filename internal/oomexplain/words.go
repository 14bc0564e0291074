package oomexplain

// Each kind's parser tells the lines it cares about by a few words
// (kernelWords, kernelSeenWords, kernelShapeWords, cudaWords, hostWords:
// every literal its chain of checks looks for contains one of them). A line holding none of a kind's words
// takes that parser's short path, which does what the whole chain would
// do with it: nothing, or inside a kernel report keep it as a raw line
// and read it as a line of the report's current section. This matters
// while an incident is open (every line is fed, not only those with an
// anchor): in a log with an incident every 40 lines, that is every line.
//
// lineWords finds the words of all kinds in one pass over the line, with
// a table of the byte pairs they start with, as interesting does for the
// anchors.

// wordSet says whose words a line holds.
type wordSet uint8

const (
	wordsKernel wordSet = 1 << iota
	wordsKernelSeen
	wordsKernelShape
	wordsCUDA
	wordsHost
	wordsAll = wordsKernel | wordsKernelSeen | wordsKernelShape | wordsCUDA | wordsHost
)

type word struct {
	s     string
	owner wordSet
}

// wordAt maps a byte pair to 1 + the index of the words starting with it
// in wordGroups.
var wordAt, wordGroups = func() (*[1 << 16]uint8, [][]word) {
	var t [1 << 16]uint8
	var groups [][]word
	add := func(list []string, owner wordSet) {
		for _, w := range list {
			k := int(w[0])<<8 | int(w[1])
			if t[k] == 0 {
				groups = append(groups, nil)
				t[k] = uint8(len(groups))
			}
			groups[t[k]-1] = append(groups[t[k]-1], word{w, owner})
		}
	}
	add(kernelWords, wordsKernel)
	add(kernelSeenWords, wordsKernelSeen)
	add(kernelShapeWords, wordsKernelShape)
	add(cudaWords, wordsCUDA)
	add(hostWords, wordsHost)
	return &t, groups
}()

// lineWords returns the kinds whose words s holds.
func lineWords(s string) wordSet {
	var found wordSet
	t := wordAt
	for i := 0; i+1 < len(s); i++ {
		g := t[uint16(s[i])<<8|uint16(s[i+1])]
		if g == 0 {
			continue
		}
		for _, w := range wordGroups[g-1] {
			if found&w.owner == 0 && len(s)-i >= len(w.s) && s[i:i+len(w.s)] == w.s {
				found |= w.owner
				if found == wordsAll {
					return found
				}
			}
		}
	}
	return found
}

// wordsOf is lineWords, or every kind when the short paths are off
// (Parser.allWords).
func (p *Parser) wordsOf(s string) wordSet {
	if p.allWords {
		return wordsAll
	}
	return lineWords(s)
}
