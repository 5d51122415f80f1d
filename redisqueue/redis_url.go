package redisqueue

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// urlOptions are the query options of a Redis URL that asynq.RedisClientOpt carries. go-redis's
// ParseURL knows more (client_name, max_retries, pool_timeout ...), which asynq's connection
// options would silently drop, so a URL naming one of those is refused instead.
var urlOptions = []string{"db", "dial_timeout", "pool_size", "read_timeout", "skip_verify", "write_timeout"}

// redisClientOpt maps a Redis URL to asynq's connection options, through go-redis's ParseURL:
// redis://[user[:password]@]host[:port][/db], rediss:// for TLS (the server name is the URL's
// host), unix:///path/to/socket?db=N, and the query options in urlOptions. asynq's own
// ParseRedisURI drops the username, which Redis ACLs need.
func redisClientOpt(redisURL string) (asynq.RedisClientOpt, error) {
	u, err := url.Parse(redisURL)
	if err != nil {
		return asynq.RedisClientOpt{}, invalidURL(redisURL, "cannot be parsed; use redis://[user:password@]host:port/db or rediss://... for TLS")
	}
	var unsupported []string
	for k := range u.Query() {
		if !slices.Contains(urlOptions, k) {
			unsupported = append(unsupported, k)
		}
	}
	if len(unsupported) > 0 {
		sort.Strings(unsupported)
		return asynq.RedisClientOpt{}, invalidURL(redisURL, fmt.Sprintf("has the option %s, which asynq's connection options cannot carry; use only %s",
			strings.Join(unsupported, ", "), strings.Join(urlOptions, ", ")))
	}
	o, err := redis.ParseURL(redisURL)
	if err != nil {
		return asynq.RedisClientOpt{}, invalidURL(redisURL, err.Error())
	}
	return asynq.RedisClientOpt{
		Network:      o.Network,
		Addr:         o.Addr,
		Username:     o.Username,
		Password:     o.Password,
		DB:           o.DB,
		DialTimeout:  o.DialTimeout,
		ReadTimeout:  o.ReadTimeout,
		WriteTimeout: o.WriteTimeout,
		PoolSize:     o.PoolSize,
		TLSConfig:    o.TLSConfig,
	}, nil
}

// invalidURL reports a bad Redis URL without its password.
func invalidURL(redisURL, reason string) error {
	return invalid("redisURL", fmt.Sprintf("%s %s", redactURL(redisURL), reason))
}

// redactURL returns redisURL with its password replaced, for error messages and logs.
func redactURL(redisURL string) string {
	u, err := url.Parse(redisURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
