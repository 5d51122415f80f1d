package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// listeningRE finds the URL in the line every build's "hookd serve" prints once it listens.
var listeningRE = regexp.MustCompile(`^listening on (http://\S+)$`)

// server is one "hookd serve" of the build.
type server struct {
	cmd   *exec.Cmd
	url   string
	args  []string
	ended chan struct{} // closed when its stderr closes

	mu    sync.Mutex
	lines []string
}

// startServer starts bin serve with args and waits until it listens.
func startServer(bin string, args ...string) (*server, error) {
	s := &server{args: args, ended: make(chan struct{})}
	s.cmd = exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	s.cmd.Env = append(os.Environ(), "HOOKD_LOG_LEVEL=warn")
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	listening := make(chan string, 1)
	go func() {
		defer close(s.ended)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			s.lines = append(s.lines, sc.Text())
			s.mu.Unlock()
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				listening <- m[1]
			}
		}
	}()
	select {
	case s.url = <-listening:
		return s, nil
	case <-s.ended:
		_ = s.cmd.Wait()
		return nil, fmt.Errorf("hookd serve %s exited before listening:\n%s", s.flags(), s.log())
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		return nil, fmt.Errorf("hookd serve %s not listening after 60 s:\n%s", s.flags(), s.log())
	}
}

// flags are the server's arguments with the token left out.
func (s *server) flags() string {
	var out []string
	for i := 0; i < len(s.args); i++ {
		out = append(out, s.args[i])
		if s.args[i] == "--token" && i+1 < len(s.args) {
			out = append(out, "TOKEN")
			i++
		}
	}
	return strings.Join(out, " ")
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// stop ends the server with sig and waits up to 60 s for it to exit; after SIGTERM it must exit 0.
func (s *server) stop(sig syscall.Signal) error {
	if err := s.cmd.Process.Signal(sig); err != nil {
		return err
	}
	select {
	case <-s.ended:
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		return fmt.Errorf("hookd serve still running 60 s after %v:\n%s", sig, s.log())
	}
	err := s.cmd.Wait()
	if sig == syscall.SIGTERM && err != nil {
		return fmt.Errorf("hookd serve after SIGTERM: %v\n%s", err, s.log())
	}
	return nil
}
