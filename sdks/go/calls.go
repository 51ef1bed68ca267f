package voiceagent

import (
	"context"
	"fmt"
	"time"
)

// TerminalCallStatuses are the statuses a call ends in.
var TerminalCallStatuses = []string{"completed", "transferred", "voicemail", "failed", "busy", "no_answer", "canceled"}

// WaitOptions sets how a wait polls: every PollInterval (default 1 s), for at most Timeout
// (default 5 min); the context may end it sooner.
type WaitOptions struct {
	PollInterval time.Duration
	Timeout      time.Duration
}

// WaitFor polls the call until done(call) holds, and answers it.
func (s *CallsService) WaitFor(ctx context.Context, id string, done func(*GetCallResponse) bool, wait WaitOptions, opts ...RequestOption) (*GetCallResponse, error) {
	if wait.PollInterval <= 0 {
		wait.PollInterval = time.Second
	}
	if wait.Timeout <= 0 {
		wait.Timeout = 5 * time.Minute
	}
	deadline := time.Now().Add(wait.Timeout)
	for {
		c, err := s.Retrieve(ctx, id, opts...)
		if err != nil {
			return nil, err
		}
		if done(c) {
			return c, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("voiceagent: call %s is still %s (recording %s) after %s", id, c.Status, deref(c.RecordingStatus), wait.Timeout)
		}
		if err := sleep(ctx, wait.PollInterval); err != nil {
			return nil, err
		}
	}
}

// WaitUntilEnded waits until the call has ended (any terminal status) and answers it.
func (s *CallsService) WaitUntilEnded(ctx context.Context, id string, wait WaitOptions, opts ...RequestOption) (*GetCallResponse, error) {
	return s.WaitFor(ctx, id, func(c *GetCallResponse) bool {
		for _, status := range TerminalCallStatuses {
			if c.Status == status {
				return true
			}
		}
		return false
	}, wait, opts...)
}

// DownloadRecording waits until the call's MP3 is made, then opens it (an error if it failed).
func (s *CallsService) DownloadRecording(ctx context.Context, id string, wait WaitOptions, opts ...RequestOption) (*Download, error) {
	c, err := s.WaitFor(ctx, id, func(c *GetCallResponse) bool {
		return c.RecordingStatus == nil || *c.RecordingStatus != "pending"
	}, wait, opts...)
	if err != nil {
		return nil, err
	}
	if deref(c.RecordingStatus) != "ready" {
		return nil, fmt.Errorf("voiceagent: call %s has no recording (recording_status %q)", id, deref(c.RecordingStatus))
	}
	return s.RecordingMP3(ctx, id, nil, opts...)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
