package mpk

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The README's install recipes, run as a user would outside the repository: a module that
// requires mpk.dev/go/mpk through a replace line, and one that uses a go.work file. Both build
// offline (GOPROXY=off): the module has no dependencies.

const installMain = `package main

import (
	"fmt"
	"log"

	"mpk.dev/go/mpk"
)

type Product struct {
	Id     int64    ` + "`msgpack:\"id\"`" + `
	Name   string   ` + "`msgpack:\"name\"`" + `
	Colors []string ` + "`msgpack:\"colors\"`" + `
}

func main() {
	b, err := mpk.Marshal(&Product{Id: 1, Name: "Trail shoe", Colors: []string{"black"}})
	if err != nil {
		log.Fatal(err)
	}
	var out Product
	if err := mpk.Unmarshal(b, &out); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%x %s\n", b[:4], out.Name)
}
`

func goTool(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		t.Skip("no go tool")
	}
	return goBin
}

func runInstall(t *testing.T, dir string, env ...string) {
	t.Helper()
	cmd := exec.Command(goTool(t), "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GOPROXY=off", "GOFLAGS=-mod=mod"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "83a26964 Trail shoe" {
		t.Fatalf("go run in %s: %v\n%s", dir, err, out)
	}
}

func TestInstallWithReplace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	here, _ := os.Getwd()
	app := t.TempDir()
	gomod := "module example.com/app\n\ngo 1.23\n\nrequire mpk.dev/go/mpk v0.0.0\n\nreplace mpk.dev/go/mpk => " + here + "\n"
	os.WriteFile(filepath.Join(app, "go.mod"), []byte(gomod), 0o644)
	os.WriteFile(filepath.Join(app, "main.go"), []byte(installMain), 0o644)
	runInstall(t, app, "GOWORK=off")
}

func TestInstallWithGoWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	here, _ := os.Getwd()
	work := t.TempDir()
	app := filepath.Join(work, "app")
	os.Mkdir(app, 0o755)
	os.WriteFile(filepath.Join(app, "go.mod"), []byte("module example.com/app\n\ngo 1.23\n"), 0o644)
	os.WriteFile(filepath.Join(app, "main.go"), []byte(installMain), 0o644)
	os.WriteFile(filepath.Join(work, "go.work"), []byte("go 1.23\n\nuse (\n\t./app\n\t"+here+"\n)\n"), 0o644)
	cmd := exec.Command(goTool(t), "run", ".")
	cmd.Dir = app
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK="+filepath.Join(work, "go.work"))
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "83a26964 Trail shoe" {
		t.Fatalf("go run with go.work: %v\n%s", err, out)
	}
}
