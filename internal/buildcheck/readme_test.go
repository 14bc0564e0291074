package buildcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's contract: the two commands a fresh machine needs (one for
// set-up and the main job, one for the whole suite) are the same block in
// the English and the Chinese README, each links the other, and every
// file either links to exists.
var (
	readmes     = []string{"README.md", "README.zh-CN.md"}
	twoCommands = regexp.MustCompile("(?s)```sh\nmake run .*?\nmake test .*?```")
	mdLink      = regexp.MustCompile(`\]\(([^)#\s]+)\)`)
)

func TestReadmes(t *testing.T) {
	var blocks []string
	for _, name := range readmes {
		b, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		blocks = append(blocks, twoCommands.FindString(text))
		for _, other := range readmes {
			if other != name && !strings.Contains(text, "]("+other+")") {
				t.Errorf("%s does not link %s", name, other)
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join("..", "..", target)); err != nil {
				t.Errorf("%s links %s: %v", name, target, err)
			}
		}
	}
	if blocks[0] == "" || blocks[0] != blocks[1] {
		t.Errorf("the two commands differ or are missing:\n%s\n---\n%s", blocks[0], blocks[1])
	}
}
