package redisqueue_test

// raceTiming scales the conformance suite's bounds under the race detector.
const raceTiming = 2
