package obsolete

// SetListBound sets how many upstreams a run lists at once, and returns a
// function that restores it.
func SetListBound(n int) func() {
	old := listBound
	listBound = n
	return func() { listBound = old }
}
