package redisqueue

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hookd/hookd"
)

func TestRedisClientOpt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url  string
		want asynq.RedisClientOpt
	}{
		{
			"redis://user:pass@cache.internal:6380/3",
			asynq.RedisClientOpt{Network: "tcp", Addr: "cache.internal:6380", Username: "user", Password: "pass", DB: 3},
		},
		{
			// A password alone (Redis before ACLs), the default port and database.
			"redis://:only-pass@127.0.0.1",
			asynq.RedisClientOpt{Network: "tcp", Addr: "127.0.0.1:6379", Password: "only-pass"},
		},
		{
			"rediss://hookd:p%40ss@redis.example.com:6390/2?dial_timeout=3s&read_timeout=2s&write_timeout=4s&pool_size=7",
			asynq.RedisClientOpt{
				Network: "tcp", Addr: "redis.example.com:6390", Username: "hookd", Password: "p@ss", DB: 2,
				DialTimeout: 3 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 4 * time.Second, PoolSize: 7,
				TLSConfig: &tls.Config{ServerName: "redis.example.com", MinVersion: tls.VersionTLS12},
			},
		},
		{
			"rediss://redis.example.com/0?skip_verify=true",
			asynq.RedisClientOpt{
				Network: "tcp", Addr: "redis.example.com:6379",
				TLSConfig: &tls.Config{ServerName: "redis.example.com", MinVersion: tls.VersionTLS12, InsecureSkipVerify: true},
			},
		},
		{
			"redis://[::1]:6379?db=5",
			asynq.RedisClientOpt{Network: "tcp", Addr: "[::1]:6379", DB: 5},
		},
		{
			"unix://user:pass@/run/redis/redis.sock?db=4",
			asynq.RedisClientOpt{Network: "unix", Addr: "/run/redis/redis.sock", Username: "user", Password: "pass", DB: 4},
		},
	} {
		t.Run(tc.url, func(t *testing.T) {
			got, err := redisClientOpt(tc.url)
			if err != nil {
				t.Fatalf("redisClientOpt: %v", err)
			}
			gotTLS, wantTLS := got.TLSConfig, tc.want.TLSConfig
			got.TLSConfig, tc.want.TLSConfig = nil, nil
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			switch {
			case (gotTLS == nil) != (wantTLS == nil):
				t.Errorf("TLSConfig %+v, want %+v", gotTLS, wantTLS)
			case gotTLS != nil:
				if gotTLS.ServerName != wantTLS.ServerName || gotTLS.MinVersion != wantTLS.MinVersion || gotTLS.InsecureSkipVerify != wantTLS.InsecureSkipVerify {
					t.Errorf("TLSConfig ServerName %q MinVersion %x InsecureSkipVerify %v, want %q %x %v",
						gotTLS.ServerName, gotTLS.MinVersion, gotTLS.InsecureSkipVerify, wantTLS.ServerName, wantTLS.MinVersion, wantTLS.InsecureSkipVerify)
				}
			}
		})
	}
}

func TestRedisClientOptRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url, mention string
	}{
		{"http://127.0.0.1:6379", "scheme"},
		{"redis://127.0.0.1:6379/x", "database"},
		{"redis://127.0.0.1:6379/1/2", "path"},
		{"redis://127.0.0.1:6379/0?dial_timeout=soon", "dial_timeout"},
		{"redis://127.0.0.1:6379/0?client_name=hookd&max_retries=2", "client_name, max_retries"},
		{"redis://127.0.0.1:6379/0?no_such_option=1", "no_such_option"},
		{"redis://u:secret-pw@127.0.0.1:6379/0?protocol=3", "protocol"},
		{"redis://u:secret-pw@127.0.0.1:6379/%zz", "cannot be parsed"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			_, err := redisClientOpt(tc.url)
			if !errors.Is(err, hookd.ErrInvalid) {
				t.Fatalf("redisClientOpt returned %v, want an error matching hookd.ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q does not mention %q", err, tc.mention)
			}
			if strings.Contains(err.Error(), "secret-pw") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}
