package serving

// Defaults of a deployment's settings where the schema has them (Azure ML's documented values).
var (
	DefaultRequest = RequestSettings{RequestTimeoutMS: 5000, MaxConcurrentRequestsPerInstance: 1, MaxQueueWaitMS: 500}
	DefaultProbe   = Probe{InitialDelay: 10, Period: 10, Timeout: 2, SuccessThreshold: 1, FailureThreshold: 30}
)

// Normalize fills a deployment's unset settings with their defaults (a deployment sent to the
// API without them, not through a file, gets the same as one decoded from YAML).
func (d *Deployment) Normalize() {
	if d.InstanceCount == 0 && d.Scale.Type != ScaleTargetUtilization {
		d.InstanceCount = 1
	}
	if d.Scale.Type == "" {
		d.Scale.Type = ScaleDefault
	}
	r := &d.Request
	if r.RequestTimeoutMS == 0 {
		r.RequestTimeoutMS = DefaultRequest.RequestTimeoutMS
	}
	if r.MaxConcurrentRequestsPerInstance == 0 {
		r.MaxConcurrentRequestsPerInstance = DefaultRequest.MaxConcurrentRequestsPerInstance
	}
	if r.MaxQueueWaitMS == 0 {
		r.MaxQueueWaitMS = DefaultRequest.MaxQueueWaitMS
	}
	for _, p := range []*Probe{&d.Liveness, &d.Readiness} {
		if p.Period == 0 {
			*p = Probe{InitialDelay: DefaultProbe.InitialDelay, Period: DefaultProbe.Period, Timeout: DefaultProbe.Timeout,
				SuccessThreshold: DefaultProbe.SuccessThreshold, FailureThreshold: DefaultProbe.FailureThreshold, Path: p.Path}
		}
	}
}
