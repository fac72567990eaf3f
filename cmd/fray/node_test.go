package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// nodePeers finds node and the Node peers of examples/node, with the npm
// package pkg of @modelcontextprotocol installed there, or skips the test
// saying what was not run (what). It returns node's path and the folder.
func nodePeers(t *testing.T, pkg, what string) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIPPED: node not found on PATH; " + what)
	}
	dir, err = filepath.Abs(filepath.Join("..", "..", "examples", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "package.json")); err != nil {
		t.Skip("SKIPPED: examples/node/node_modules is not installed (npm ci there)")
	}
	t.Setenv("NODE_NO_WARNINGS", "1")
	return node, dir
}
