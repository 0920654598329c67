package image

// stageOptions are the Dockerfile builders' flags for Request.Target and
// Request.BuildArgs (build.stage, build.args), in a stable order.
func stageOptions(req Request) []string {
	var args []string
	if req.Target != "" {
		args = append(args, "--target", req.Target)
	}
	for _, kv := range sortedPairs(req.BuildArgs) {
		args = append(args, "--build-arg", kv)
	}
	return args
}
