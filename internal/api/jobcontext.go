package api

import "time"

// CreationContext says who created a job and when, as Azure's `az ml job show` has it.
// CreatedBy is the user the job's request authenticated as (the name `whoami` prints).
type CreationContext struct {
	CreatedAt     time.Time `json:"created_at"`
	CreatedBy     string    `json:"created_by"`
	CreatedByType string    `json:"created_by_type"` // "User"
}

// JobService is where a job is seen (Azure's services: Studio, Tracking).
type JobService struct {
	Endpoint string `json:"endpoint"`
	Type     string `json:"job_service_type"`
}
