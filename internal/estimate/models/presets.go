package models

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

// The presets are config.json files (or {"torchvision": NAME}) embedded in
// the binary; "/" in a hub name is spelled "--" in the file name.
//
//go:embed presets/*.json
var presetFS embed.FS

// PresetNames lists the built-in model names, sorted.
func PresetNames() []string {
	ents, _ := presetFS.ReadDir("presets")
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, strings.ReplaceAll(strings.TrimSuffix(e.Name(), ".json"), "--", "/"))
	}
	sort.Strings(names)
	return names
}

// Preset returns the built-in model called name. Matching ignores case and
// the hub organisation ("Llama-3.1-8B" finds "meta-llama/Llama-3.1-8B").
func Preset(name string) (*Model, error) {
	want := strings.ToLower(strings.TrimSpace(name))
	for _, n := range PresetNames() {
		l := strings.ToLower(n)
		if l == want || path.Base(l) == want {
			return loadPreset(n)
		}
	}
	return nil, fmt.Errorf("unknown model %q; built-in models: %s (or pass --config / --safetensors)",
		name, strings.Join(PresetNames(), ", "))
}

func loadPreset(name string) (*Model, error) {
	data, err := presetFS.ReadFile("presets/" + strings.ReplaceAll(name, "/", "--") + ".json")
	if err != nil {
		return nil, fmt.Errorf("read preset %s: %w", name, err)
	}
	m, err := ParseConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", name, err)
	}
	m.Name = name
	return m, nil
}
