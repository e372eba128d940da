package controller

import (
	"crypto/rand"
	"math/big"
)

var adjectives = []string{"amber", "bold", "brave", "bright", "calm", "clever", "cosmic", "crisp", "eager",
	"fancy", "gentle", "golden", "happy", "honest", "jolly", "keen", "lively", "lucid", "mellow", "nimble",
	"patient", "plucky", "quiet", "quick", "rapid", "sharp", "shiny", "silver", "sincere", "steady", "sunny",
	"swift", "tidy", "upbeat", "vivid", "witty", "zesty"}

var nouns = []string{"badger", "beacon", "cactus", "comet", "coral", "falcon", "fern", "garden", "glacier",
	"harbor", "heron", "island", "kettle", "lantern", "lemon", "maple", "meadow", "nebula", "otter", "owl",
	"panda", "pepper", "pine", "quartz", "raven", "river", "rocket", "salmon", "spruce", "tiger", "tulip",
	"walrus", "willow", "yak", "zebra"}

const nameAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

func pick(n int) int {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return int(v.Int64())
}

// newRunName returns a name like "plucky_otter_k3x9q2mz" and its display name "plucky_otter".
func newRunName() (name, display string) {
	display = adjectives[pick(len(adjectives))] + "_" + nouns[pick(len(nouns))]
	suffix := make([]byte, 8)
	for i := range suffix {
		suffix[i] = nameAlphabet[pick(len(nameAlphabet))]
	}
	return display + "_" + string(suffix), display
}
