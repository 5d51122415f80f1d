package jobqueue

import "time"

// A job runs on a runner: a goroutine that, its job done, waits runnerIdle for the next job
// before it ends. A goroutine started for each job grows its stack anew for each one (a worker's
// path runs deep: the handler, net/http, the store's driver), which took about 4 % of the CPU of
// a process delivering to receivers that answer at once; a runner keeps its grown stack for the
// jobs that follow. Runners are at most the jobs in flight, which the lanes' slots bound.
const runnerIdle = time.Second

// spawn runs f on a runner that is waiting for a job, or on a new one.
func (e *Engine[R]) spawn(f func()) {
	select {
	case e.idle <- f:
	default:
		go e.runner(f)
	}
}

// runner runs f, then the jobs spawn hands it, until none has come for runnerIdle.
func (e *Engine[R]) runner(f func()) {
	var t *time.Timer
	for {
		f()
		if t == nil {
			t = time.NewTimer(runnerIdle)
		} else {
			t.Reset(runnerIdle)
		}
		select {
		case f = <-e.idle:
		case <-t.C:
			return
		}
	}
}
