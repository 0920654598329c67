// Package ghapi is the small GitHub REST client patchkit needs: the diff of a
// commit, with the token from the environment, retries on rate limits, and
// errors that never show the token.
package ghapi
