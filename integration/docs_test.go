//go:build linux

package integration

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unsafe"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
)

// The documents whose shell blocks TestDocs runs, in order: the manual's
// examples use the README's node and cluster, as a reader who went
// through the README has them running.
var runnableDocs = []string{"README.md", "cmd/ticketd/OPERATIONS.md"}

// runMarker opens a runnable block: a fenced block whose info string is
// "sh run", optionally followed by needs=TOOL for a block that needs a
// program make test does not otherwise need (haproxy): without it the
// block is left out, unless TICKETD_REQUIRE_<TOOL>=1 (CI). Renderers
// highlight it as sh; TestDocs runs it as written.
const runMarker = "sh run"

// docBlock is one runnable shell block of a document.
type docBlock struct {
	file  string // path relative to the module root
	line  int    // line of the opening fence
	text  string // the commands, indentation of the fence removed
	needs string // a program the block needs (needs=TOOL), or ""
}

// runnableBlocks returns the runnable blocks of a Markdown text.
func runnableBlocks(file, text string) ([]docBlock, error) {
	var (
		blocks []docBlock
		cur    *docBlock
		indent string
		fence  string // the open fence's backticks, "" outside a fenced block
	)
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if !strings.HasPrefix(trimmed, "```") {
			if cur != nil {
				cur.text += strings.TrimPrefix(line, indent) + "\n"
			}
			continue
		}
		ticks := trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
		if fence != "" {
			if ticks == trimmed && len(ticks) >= len(fence) {
				if cur != nil {
					blocks = append(blocks, *cur)
					cur = nil
				}
				fence = ""
			} else if cur != nil {
				cur.text += strings.TrimPrefix(line, indent) + "\n"
			}
			continue
		}
		fence = ticks
		info := strings.TrimSpace(strings.TrimPrefix(trimmed, ticks))
		if rest, ok := strings.CutPrefix(info, runMarker); ok && (rest == "" || rest[0] == ' ') {
			indent = line[:len(line)-len(strings.TrimLeft(line, " \t"))]
			cur = &docBlock{file: file, line: n}
			for _, opt := range strings.Fields(rest) {
				tool, ok := strings.CutPrefix(opt, "needs=")
				if !ok || tool == "" {
					return nil, fmt.Errorf("%s:%d: %q after %q: want needs=TOOL", file, n, opt, runMarker)
				}
				cur.needs = tool
			}
		}
	}
	if fence != "" {
		return nil, fmt.Errorf("%s: a fenced block is never closed", file)
	}
	return blocks, sc.Err()
}

// docsScript joins the blocks into one bash script: each block's commands
// as written, after a line naming the block, so that the first failing
// command stops the script and says which block it was in. A command the
// documents expect to fail is written "! command"; bash's set -e ignores
// an inverted status, so such a command gets "|| false" after it (after
// its last continued line): one that succeeds stops the script too.
func docsScript(blocks []docBlock) string {
	var b strings.Builder
	b.WriteString(`set -eEuo pipefail
trap 'echo "docs test: $DOCS_BLOCK failed (exit status $?) at: $BASH_COMMAND" >&2' ERR
# The binary is already built (bin/ticketd); other make targets are not
# run from the documents.
make() {
  if [ "$*" = build ]; then return 0; fi
  echo "docs test: make $* is not run by the docs test" >&2
  return 1
}
`)
	for _, bl := range blocks {
		fmt.Fprintf(&b, "\nDOCS_BLOCK='%s:%d'\necho \"== $DOCS_BLOCK\"\n%s", bl.file, bl.line, mustFail(bl.text))
	}
	b.WriteString("\necho '== docs test: every block ran'\n")
	return b.String()
}

// mustFail appends "|| false" to each command of text that starts with
// "! " (see docsScript).
func mustFail(text string) string {
	lines := strings.SplitAfter(text, "\n")
	inverted := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "! ") {
			inverted = true
		}
		body := strings.TrimRight(l, "\n")
		if inverted && !strings.HasSuffix(body, "\\") {
			lines[i] = body + " || false" + l[len(body):]
			inverted = false
		}
	}
	return strings.Join(lines, "")
}

// TestDocs runs the shell blocks of the README and the operator's manual
// marked runnable (a fenced block with the info string "sh run"), as
// written, against a fresh build: a renamed flag, path or port breaks
// make test, not a reader. The blocks run in order in one bash, in an
// empty directory holding bin/ticketd, with ticketd also on PATH; a
// failing command fails the test, naming its block.
//
// The blocks use the documented ports (3306, 3301-3303, ...). The script
// runs in a network namespace of its own where the kernel allows one
// (then nothing else on the machine can hold those ports, and whatever
// the blocks start cannot outlive the test's process group either way).
func TestDocs(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the documents' blocks need %s: %v", tool, err)
		}
	}
	if _, err := exec.LookPath("mysql"); err != nil {
		msg := "the documents' blocks need the mysql command-line client (apt-get install mariadb-client)"
		if harness.MariaDBRequired() {
			t.Fatalf("%s and TICKETD_REQUIRE_MARIADB=1", msg)
		}
		t.Skipf("%s; set TICKETD_REQUIRE_MARIADB=1 to make this a failure", msg)
	}
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	for _, doc := range runnableDocs {
		text, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := runnableBlocks(doc, string(text))
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) == 0 {
			t.Fatalf("%s has no runnable block (a fenced block with the info string %q)", doc, runMarker)
		}
		t.Logf("%s: %d runnable blocks", doc, len(bs))
		for _, b := range bs {
			if b.needs != "" {
				if _, err := exec.LookPath(b.needs); err != nil {
					env := "TICKETD_REQUIRE_" + strings.ToUpper(b.needs)
					if os.Getenv(env) == "1" {
						t.Fatalf("%s:%d needs %s, which is not installed, and %s=1", b.file, b.line, b.needs, env)
					}
					t.Logf("%s:%d left out: it needs %s, which is not installed (set %s=1 to make this a failure)", b.file, b.line, b.needs, env)
					continue
				}
			}
			blocks = append(blocks, b)
		}
	}

	work, err := os.MkdirTemp("", "ticketd-docs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Mkdir(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(harness.Binary(t), filepath.Join(work, "bin", "ticketd")); err != nil {
		t.Fatal(err)
	}
	// The recipes the blocks install or edit (cmd/ticketd/deploy/...),
	// read-only: a block writes its own copies in the directory.
	if err := os.Symlink(filepath.Join(root, "cmd"), filepath.Join(work, "cmd")); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(work, ".docs.sh")
	if err := os.WriteFile(script, []byte(docsScript(blocks)), 0o644); err != nil {
		t.Fatal(err)
	}
	outPath := filepath.Join(work, ".docs.out")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()

	mode, err := runDocsScript(t, work, script, out)
	output, _ := os.ReadFile(outPath)
	if err != nil {
		where := "no block named"
		for line := range strings.Lines(string(output)) {
			if strings.HasPrefix(line, "docs test: ") {
				where = strings.TrimSpace(line)
			}
		}
		t.Errorf("the documents' blocks (%s) failed: %v\n%s\noutput:\n%s", mode, err, where, tail(string(output), 60))
		logs, _ := filepath.Glob(filepath.Join(work, "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", filepath.Base(l), tail(string(b), 20))
		}
		return
	}
	if !strings.Contains(string(output), "== docs test: every block ran") {
		t.Fatalf("the script ended before its last block:\n%s", tail(string(output), 40))
	}
	t.Logf("%d blocks ran (%s)", len(blocks), mode)
}

// docsNetnsEnv tells the re-executed test binary to bring up the loopback
// interface of its new network namespace and become bash.
const docsNetnsEnv = "TICKETD_DOCS_NETNS_SCRIPT"

func init() {
	if script := os.Getenv(docsNetnsEnv); script != "" {
		os.Unsetenv(docsNetnsEnv)
		if err := loopbackUp(); err != nil {
			fmt.Fprintln(os.Stderr, "docs test: bringing up lo:", err)
			os.Exit(2)
		}
		bash, err := exec.LookPath("bash")
		if err == nil {
			err = syscall.Exec(bash, []string{"bash", script}, os.Environ())
		}
		fmt.Fprintln(os.Stderr, "docs test: exec bash:", err)
		os.Exit(2)
	}
}

// loopbackUp sets IFF_UP on lo, which a new network namespace has down.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte // struct ifreq: the name, then ifr_flags
	copy(ifr[:], "lo")
	ioctl := func(req uintptr) error {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
			return e
		}
		return nil
	}
	if err := ioctl(syscall.SIOCGIFFLAGS); err != nil {
		return err
	}
	*(*uint16)(unsafe.Pointer(&ifr[syscall.IFNAMSIZ])) |= syscall.IFF_UP
	return ioctl(syscall.SIOCSIFFLAGS)
}

// runDocsScript runs the script in its own process group, in a new user
// and network namespace if the kernel allows it, else in a new network
// namespace (root), else on the host's network; it says which. When the
// script ends (or after 5 minutes) the whole group is killed: the nodes
// the blocks started in the background with it.
func runDocsScript(t *testing.T, dir, script string, out *os.File) (string, error) {
	env := []string{"HOME=" + dir, "PATH=" + filepath.Join(dir, "bin") + ":" + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "PATH" || strings.HasPrefix(k, "TICKETD_") || strings.HasPrefix(k, "MYSQL_") {
			continue
		}
		env = append(env, kv)
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return "", err
	}
	ids := func(id int) []syscall.SysProcIDMap {
		return []syscall.SysProcIDMap{{ContainerID: 0, HostID: id, Size: 1}}
	}
	modes := []struct {
		name string
		attr *syscall.SysProcAttr
	}{
		{"user and network namespace", &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
			UidMappings: ids(os.Getuid()), GidMappings: ids(os.Getgid())}},
		{"network namespace", &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWNET}},
		{"host network", &syscall.SysProcAttr{Setpgid: true}},
	}
	for _, m := range modes {
		var cmd *exec.Cmd
		if m.attr.Cloneflags != 0 {
			cmd = exec.Command(self, "-test.run=^$")
			cmd.Env = append(env, docsNetnsEnv+"="+script)
		} else {
			cmd = exec.Command(bash, script)
			cmd.Env = env
		}
		cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = dir, out, out, m.attr
		if err := cmd.Start(); err != nil {
			if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) {
				t.Logf("docs test: no %s here (%v)", m.name, err)
				continue
			}
			return m.name, err
		}
		pgid := cmd.Process.Pid
		timer := time.AfterFunc(5*time.Minute, func() { syscall.Kill(-pgid, syscall.SIGKILL) })
		err := cmd.Wait()
		timer.Stop()
		killGroup(pgid)
		return m.name, err
	}
	return "", errors.New("cannot start bash")
}

// killGroup ends what the blocks left running: SIGTERM (the nodes shut
// down in order), SIGKILL after 10 s.
func killGroup(pgid int) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestRunnableBlocks checks the extraction: only "sh run" blocks, their
// lines, indentation inside a list item removed, other blocks (and fences
// inside them) ignored.
func TestRunnableBlocks(t *testing.T) {
	doc := "# t\n```sh\nnot run\n```\n\n```sh run\necho a\n```\n" +
		"1. step\n   ```sh run\n   echo b\n     echo c\n   ```\n````\n```sh run\n````\n"
	got, err := runnableBlocks("d.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []docBlock{{"d.md", 6, "echo a\n", ""}, {"d.md", 10, "echo b\n  echo c\n", ""}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("blocks %+v, want %+v", got, want)
	}
	if _, err := runnableBlocks("d.md", "```sh run\necho\n"); err == nil {
		t.Error("an unclosed block is not an error")
	}
	got, err = runnableBlocks("d.md", "```sh run needs=haproxy\nhaproxy -v\n```\n```sh runner\n```\n")
	if err != nil || len(got) != 1 || got[0].needs != "haproxy" {
		t.Errorf("needs=haproxy: %+v, %v", got, err)
	}
	if got := mustFail("a\n! b \\\n  c\n  ! d\n"); got != "a\n! b \\\n  c || false\n  ! d || false\n" {
		t.Errorf("mustFail: %q", got)
	}
	if _, err := runnableBlocks("d.md", "```sh run haproxy\n```\n"); err == nil {
		t.Error("an unknown word after sh run is not an error")
	}
}

// TestDocLinks checks the documents' relative links: the file exists and,
// for a link with #anchor, it has a heading of that anchor (GitHub's
// rule: lower case, punctuation dropped, spaces to dashes). A section
// renamed or moved breaks it, not a reader's click.
func TestDocLinks(t *testing.T) {
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	headings := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		text, _ := os.ReadFile(path)
		for line := range strings.Lines(string(text)) {
			if h, ok := strings.CutPrefix(line, "#"); ok {
				a[anchor(strings.TrimLeft(h, "#"))] = true
			}
		}
		anchors[path] = a
		return a
	}
	checked := 0
	for _, doc := range append(runnableDocs, "integration/BENCHMARKS.md") {
		text, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := filepath.Join(root, doc)
			if file != "" {
				path = filepath.Join(filepath.Dir(path), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s: %v", doc, target, err)
				continue
			}
			if frag != "" && !headings(path)[frag] {
				t.Errorf("%s links to %s: no heading with anchor #%s in %s", doc, target, frag, file)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: is the pattern right?")
	}
}

// anchor is the anchor GitHub gives a heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocFlags checks every ticketd command line of the documents, the
// blocks TestDocs cannot run included (three hosts, systemd, TLS with
// 10.0.0.x addresses, ...): each --flag must be one that ticketd, or the
// subcommand it names, lists in its -h. Commands are the lines of sh
// blocks and, in other blocks, the lines shown after a "$ " prompt.
func TestDocFlags(t *testing.T) {
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := harness.Binary(t)
	flagLine := regexp.MustCompile(`(?m)^\s+-([a-z0-9][a-z0-9-]*)`)
	known := map[string]map[string]bool{}
	flagsOf := func(sub string) map[string]bool {
		if fs, ok := known[sub]; ok {
			return fs
		}
		args := []string{"-h"}
		if sub != "" {
			args = []string{sub, "-h"}
		}
		out, _ := exec.Command(bin, args...).CombinedOutput() // -h exits non-zero
		fs := map[string]bool{}
		for _, m := range flagLine.FindAllStringSubmatch(string(out), -1) {
			fs[m[1]] = true
		}
		known[sub] = fs
		return fs
	}
	if len(flagsOf("")) < 10 {
		t.Fatalf("ticketd -h lists %d flags", len(flagsOf("")))
	}
	checked := 0
	for _, doc := range runnableDocs {
		text, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range docCommands(string(text)) {
			f := strings.Fields(c.text)
			for i := 0; i < len(f); i++ {
				if f[i] != "ticketd" && !strings.HasSuffix(f[i], "/ticketd") || !commandPosition(f, i) {
					continue
				}
				sub, j := "", i+1
				if j < len(f) && regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(f[j]) && len(flagsOf(f[j])) > 0 {
					sub, j = f[j], j+1
				}
				for ; j < len(f) && !strings.ContainsAny(f[j][:1], "|&;>#<") && !strings.HasPrefix(f[j], "2>"); j++ {
					name, ok := strings.CutPrefix(f[j], "--")
					if !ok || name == "" {
						continue
					}
					name, _, _ = strings.Cut(name, "=")
					checked++
					if !flagsOf(sub)[name] {
						t.Errorf("%s:%d: %s has no flag --%s: %s", doc, c.line, strings.TrimSpace("ticketd "+sub), name, c.text)
					}
				}
				i = j - 1
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d flags found in the documents' commands: is the parsing right?", checked)
	}
	t.Logf("%d flags of ticketd command lines checked", checked)
}

// commandPosition reports whether word i of a command line is a command
// name: the first word, or the first after an operator, a keyword that
// starts a command, or environment assignments.
func commandPosition(words []string, i int) bool {
	for i > 0 && regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(words[i-1]) {
		i--
	}
	if i == 0 {
		return true
	}
	switch prev := words[i-1]; prev {
	case "|", "||", "&&", "&", ";", "then", "do", "else", "!", "exec", "time":
		return true
	default:
		return strings.HasSuffix(prev, ";")
	}
}

// docCommand is one shell command line of a document, continuation lines
// joined.
type docCommand struct {
	line int
	text string
}

// docCommands returns the command lines of a Markdown text: every line of
// a fenced block whose info string starts with "sh", and in blocks without
// an info string the lines after a "$ " prompt.
func docCommands(text string) []docCommand {
	var (
		out   []docCommand
		fence string
		shell bool
		cur   *docCommand
	)
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		ticks := line[:len(line)-len(strings.TrimLeft(line, "`"))]
		if len(ticks) >= 3 {
			if fence == "" {
				fence = ticks
				info := strings.TrimSpace(line[len(ticks):])
				shell = info == "sh" || strings.HasPrefix(info, "sh ")
				continue
			}
			if ticks == line && len(ticks) >= len(fence) {
				fence, cur = "", nil
				continue
			}
		}
		if fence == "" {
			continue
		}
		if cur == nil {
			cmd, prompt := strings.CutPrefix(line, "$ ")
			if !shell && !prompt {
				continue
			}
			out = append(out, docCommand{line: n})
			cur, line = &out[len(out)-1], cmd
		}
		body, cont := strings.CutSuffix(line, "\\")
		cur.text += body + " "
		if !cont {
			cur = nil
		}
	}
	return out
}

// TestDocVersions: the command version the documents show is the one
// the binary prints (`ticketd --version`), read from it rather than
// written here, so that a build that raises it fails until the README's
// `ticketd status` sample and the manual's "this one is N" follow, and
// the manual's "Upgrades and command versions" says what version N is.
// (The README showed 7, the manual 8, the binary 9: issue 34.)
func TestDocVersions(t *testing.T) {
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(harness.Binary(t), "--version").Output()
	if err != nil {
		t.Fatalf("ticketd --version: %v", err)
	}
	m := regexp.MustCompile(`(?m)^command version: (\d+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("ticketd --version prints no command version:\n%s", out)
	}
	version := string(m[1])
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	manual, err := os.ReadFile(filepath.Join(root, "cmd/ticketd/OPERATIONS.md"))
	if err != nil {
		t.Fatal(err)
	}

	// The README's `ticketd status` sample: the CMD VERSION column of
	// each member's row and the cluster's line.
	lines := strings.Split(string(readme), "\n")
	rows := 0
	for i, l := range lines {
		col := strings.Index(l, "CMD VERSION")
		if col < 0 || !strings.HasPrefix(l, "ID ") {
			continue
		}
		for _, r := range lines[i+1:] {
			if c, ok := strings.CutPrefix(r, "cluster command version: "); ok {
				if c != version {
					t.Errorf("README.md:%d: the status sample's cluster command version is %s; ticketd --version says %s", i+1, c, version)
				}
				break
			}
			f := strings.Fields(r[min(col, len(r)):])
			if len(f) == 0 || f[0] != version {
				t.Errorf("README.md:%d: the status sample's CMD VERSION is %q; ticketd --version says %s: %s", i+1, f, version, r)
			}
			rows++
		}
	}
	if rows == 0 {
		t.Errorf("README.md: no `ticketd status` sample with a CMD VERSION column found")
	}

	section := docSection(string(manual), "### Upgrades and command versions")
	if section == "" {
		t.Fatal(`OPERATIONS.md has no "### Upgrades and command versions" section`)
	}
	if m := regexp.MustCompile(`this one is (\d+)`).FindStringSubmatch(section); m == nil {
		t.Errorf(`OPERATIONS.md "Upgrades and command versions" does not say "this one is %s"`, version)
	} else if m[1] != version {
		t.Errorf(`OPERATIONS.md "Upgrades and command versions": "this one is %s"; ticketd --version says %s`, m[1], version)
	}
	if !regexp.MustCompile(`\bVersion ` + version + `\b`).MatchString(section) {
		t.Errorf(`OPERATIONS.md "Upgrades and command versions" does not say what version %s is ("Version %s ...")`, version, version)
	}
}

// docSection returns a Markdown section from its heading line to the next
// heading of the same or a higher level, or "".
func docSection(text, heading string) string {
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		return ""
	}
	rest := text[i+1+len(heading):]
	level := strings.Index(heading, " ")
	for _, prefix := range []string{"\n# ", "\n## ", "\n### ", "\n#### "}[:level] {
		if j := strings.Index(rest, prefix); j >= 0 {
			rest = rest[:j]
		}
	}
	return heading + rest
}

// unsupportedProbes are statements whose answer the manual's "What is
// supported" decides: a probe is covered when an item of its "Not
// supported (error 1235 ...)" list matches listed, and then ticketd must
// refuse it with 1235; when no item matches, ticketd must not. Every item
// of the list must cover a probe. (The list said `DELETE` and "tables
// with other columns" long after row tables took both: issue 34.)
var unsupportedProbes = []struct {
	listed *regexp.Regexp
	sql    string
}{
	{regexp.MustCompile("^`DELETE`( from a ticket table.*)?$"), "DELETE FROM Tickets64 WHERE stub = 'a'"},
	{regexp.MustCompile("^`DELETE`( .*sequence.*)?$"), "DELETE FROM s"},
	{regexp.MustCompile("^`DELETE`$"), "DELETE FROM r WHERE id = 1"},
	{regexp.MustCompile("other columns"), "CREATE TABLE other (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, stub CHAR(1) NOT NULL, note VARCHAR(20))"},
	{regexp.MustCompile("^`TRUNCATE`"), "TRUNCATE TABLE r"},
	{regexp.MustCompile("^joins$"), "SELECT * FROM Tickets64 JOIN r"},
	{regexp.MustCompile("^subqueries$"), "SELECT * FROM r WHERE id IN (SELECT id FROM r)"},
	{regexp.MustCompile("^`SET GLOBAL`"), "SET GLOBAL wait_timeout = 5"},
	{regexp.MustCompile("^`SET GLOBAL`$"), "SET GLOBAL auto_increment_increment = 1"},
}

// TestDocUnsupported runs unsupportedProbes against a fresh node.
func TestDocUnsupported(t *testing.T) {
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	manual, err := os.ReadFile(filepath.Join(root, "cmd/ticketd/OPERATIONS.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := docSection(string(manual), "## What is supported")
	m := regexp.MustCompile(`(?s)Not supported \(error 1235, "[^"]*"\):\s*(.*?)\.\s`).FindStringSubmatch(section)
	if m == nil {
		t.Fatal(`OPERATIONS.md "What is supported" has no "Not supported (error 1235, ...): ..." list`)
	}
	var items []string
	for _, it := range strings.Split(m[1], ",") {
		items = append(items, strings.Join(strings.Fields(it), " "))
	}
	node, ctx := startNode(t)
	c := pinConn(t, ctx, openDB(t, node.DSN("")))
	for _, q := range []string{"CREATE DATABASE probes", "USE probes", harness.FlickrDDL("Tickets64"),
		"CREATE TABLE r (id INT NOT NULL PRIMARY KEY, v VARCHAR(10))", "CREATE SEQUENCE s"} {
		mustExec(t, ctx, c, q)
	}
	used := map[string]bool{}
	for _, p := range unsupportedProbes {
		covering := ""
		for _, it := range items {
			if p.listed.MatchString(it) {
				covering = it
				used[it] = true
			}
		}
		_, err := c.ExecContext(ctx, p.sql)
		var me *mysql.MySQLError
		refused := errors.As(err, &me) && me.Number == 1235
		switch {
		case covering != "" && !refused:
			t.Errorf("the manual lists %q as not supported, but %s answers %v", covering, p.sql, err)
		case covering == "" && refused:
			t.Errorf("%s answers %v, and the manual's list of what is not supported does not say so", p.sql, err)
		}
	}
	for _, it := range items {
		if !used[it] {
			t.Errorf("the manual lists %q as not supported and no probe covers it: add one to unsupportedProbes", it)
		}
	}
}

// TestDocFirstSessionPortTaken pastes the README's first block a second
// time, from another directory, while the node the first paste started
// holds the ports (as a reader does with `make run` going): the paste
// must fail and print why, naming the taken port's flag. It printed
// "ready", the other node's answer, and the failure was only in
// ticketd.log (issue 34).
func TestDocFirstSessionPortTaken(t *testing.T) {
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := runnableBlocks("README.md", string(readme))
	if err != nil || len(blocks) == 0 {
		t.Fatalf("README.md's runnable blocks: %v", err)
	}
	first := blocks[0].text
	if !strings.Contains(first, "bin/ticketd") {
		t.Fatalf("README.md's first runnable block starts no node:\n%s", first)
	}
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(harness.Binary(t), filepath.Join(work, "bin", "ticketd")); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(work, ".first.sh")
	text := "make() { return 0; }\nset -e\n" + first +
		"\nmkdir second && cd second && ln -s ../bin bin\necho '== second paste'\nset +e\n" + first +
		"\necho \"== second paste exit status $?\"\n"
	if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(work, ".first.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	mode, err := runDocsScript(t, work, script, out)
	output, _ := os.ReadFile(out.Name())
	if err != nil {
		t.Fatalf("the script (%s): %v\n%s", mode, err, output)
	}
	_, second, ok := strings.Cut(string(output), "== second paste\n")
	ready := regexp.MustCompile(`(?m)^ready$`) // /readyz's answer, as curl prints it
	if !ok || !ready.MatchString(string(output)) {
		t.Fatalf("the first paste did not start a node (%s):\n%s", mode, output)
	}
	if ready.MatchString(second) || !strings.Contains(second, "address already in use") ||
		!strings.Contains(second, "--mysql-addr") || !strings.Contains(second, "exit status 1") {
		t.Errorf("the second paste (%s) printed:\n%s\nwant the taken port and --mysql-addr named, no \"ready\", exit status 1", mode, second)
	}
}
