// Package ghapi is the small GitHub REST client patchkit needs: the diff of a
// commit, with the token from the environment, retries on rate limits, and
// errors that never show the token. The token goes only to the API's own
// origin (never to the host a redirect names), and every request is
// bounded (internal/httpguard): its time (WithTimeout), its answer's size
// (MaxAnswer) and a list's pages (MaxPages).
package ghapi
