package riverqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// rescuePage is how many running jobs rescueRunning reads at a time.
const rescuePage = 1000

// rescueMessage is the error recorded on a job moved back by RescueOnStart.
const rescueMessage = "riverqueue: rescued at start: the process working the job ended"

// rescueRunning moves every running job of JobKind back to available, due at now, with its
// attempt given back, and deletes River's leader row, all in one transaction. It returns the
// number of jobs moved. It is right only when no other process works this database (see
// Config.RescueOnStart).
//
// It goes through River's driver executor only, so it works with every River driver:
// JobGetStuck with a horizon in the future lists every running job, JobUpdateFull gives the
// attempt back, JobRescueMany (River's own rescuer's write) makes the job available and records
// why, and LeaderDeleteExpired with a "now" in the future deletes the leader row.
func rescueRunning(ctx context.Context, exec riverdriver.Executor, now time.Time) (n int, err error) {
	tx, err := exec.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("riverqueue: rescue: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()

	// Every job running now began before this; far enough ahead to absorb clock skew.
	horizon := now.Add(24 * time.Hour)

	var jobs []*rivertype.JobRow
	for afterID := int64(0); ; {
		page, err := tx.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{AfterID: afterID, Max: rescuePage, StuckHorizon: horizon})
		if err != nil {
			return 0, fmt.Errorf("riverqueue: rescue: list running jobs: %w", err)
		}
		for _, j := range page {
			afterID = j.ID
			if j.Kind == JobKind {
				jobs = append(jobs, j)
			}
		}
		if len(page) < rescuePage {
			break
		}
	}

	if len(jobs) > 0 {
		p := &riverdriver.JobRescueManyParams{StuckHorizon: horizon}
		for _, j := range jobs {
			if _, err := tx.JobUpdateFull(ctx, &riverdriver.JobUpdateFullParams{
				ID: j.ID, AttemptDoUpdate: true, Attempt: max(j.Attempt-1, 0),
			}); err != nil {
				return 0, fmt.Errorf("riverqueue: rescue: job %d: give back attempt: %w", j.ID, err)
			}
			rec, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: j.Attempt, Error: rescueMessage})
			if err != nil {
				return 0, fmt.Errorf("riverqueue: rescue: job %d: %w", j.ID, err)
			}
			p.ID = append(p.ID, j.ID)
			p.Error = append(p.Error, rec)
			p.FinalizedAt = append(p.FinalizedAt, nil)
			p.ScheduledAt = append(p.ScheduledAt, now)
			p.State = append(p.State, string(rivertype.JobStateAvailable))
		}
		if _, err := tx.JobRescueMany(ctx, p); err != nil {
			return 0, fmt.Errorf("riverqueue: rescue: make %d jobs available: %w", len(jobs), err)
		}
	}

	if _, err := tx.LeaderDeleteExpired(ctx, &riverdriver.LeaderDeleteExpiredParams{Now: &horizon}); err != nil {
		return 0, fmt.Errorf("riverqueue: rescue: delete leader: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("riverqueue: rescue: commit: %w", err)
	}
	return len(jobs), nil
}
