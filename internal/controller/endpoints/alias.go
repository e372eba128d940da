package endpoints

import (
	"context"
	"errors"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/tick"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// aliasTick is how often the alias loop looks at the aliases deployments follow.
const aliasTick = 2 * time.Second

// aliasKey names a deployment for the alias loop: online or batch (their names are apart).
type aliasKey struct {
	batch bool
	serving.Key
}

// aliasMemo is what the alias loop keeps between passes (in memory: after a restart a failed
// roll is tried again at once).
type aliasMemo struct {
	failed map[aliasKey]aliasFailure
	// warn is what each online deployment's state warns of (serving.DecideAlias), shown with
	// its reason.
	warn map[serving.Key]string
}

type aliasFailure struct {
	to, why string
	at      time.Time
}

// followAliases runs the alias loop until ctx ends: deployments whose model is
// azureml:<name>@<alias> roll when the alias moves (UpdateDeployment's rolling replacement).
func (s *Serving) followAliases(ctx context.Context) {
	tick.Loop(ctx, aliasTick, nil, func(ctx context.Context) {
		if err := s.AliasPass(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("alias pass", "err", err)
		}
	})
}

// AliasPass is one pass of the alias loop: every deployment that follows an alias is compared
// with where the alias points now, and rolled to it (serving.DecideAlias).
func (s *Serving) AliasPass(ctx context.Context) error {
	deps, err := s.store.Serving.Deployments(ctx, "")
	if err != nil {
		return err
	}
	warn := map[serving.Key]string{}
	for _, d := range deps {
		k := serving.Key{Endpoint: d.Spec.Endpoint, Deployment: d.Spec.Name}
		dec, ok := s.decideAlias(ctx, aliasKey{Key: k}, d.Spec.Model)
		if !ok {
			continue
		}
		if dec.Roll {
			// Only the generation read: a user's update meanwhile is not undone (the next pass
			// decides again).
			_, err := s.putDeployment(ctx, d.Spec, d.Generation, false, false)
			if isNotFound(err) {
				continue
			}
			dec.Warning = s.rolled(aliasKey{Key: k}, d.Spec.Model, dec.To, err)
		}
		if dec.Warning != "" {
			warn[k] = dec.Warning
		}
	}
	s.memo.mu.Lock()
	changed := len(warn) != len(s.memo.alias.warn)
	for k, w := range warn {
		changed = changed || s.memo.alias.warn[k] != w
	}
	s.memo.alias.warn = warn
	s.memo.mu.Unlock()
	if changed {
		s.Wake() // the serving pass writes the warning into the deployments' state
	}
	return s.followBatchAliases(ctx)
}

// followBatchAliases rolls batch deployments that follow an alias: their next jobs use the
// alias's version (jobs already made keep theirs).
func (s *Serving) followBatchAliases(ctx context.Context) error {
	eps, err := s.store.Serving.BatchEndpoints(ctx)
	if err != nil {
		return err
	}
	for _, e := range eps {
		deps, err := s.store.Serving.BatchDeployments(ctx, e.Spec.Name)
		if err != nil {
			return err
		}
		for _, d := range deps {
			k := aliasKey{batch: true, Key: serving.Key{Endpoint: d.Spec.Endpoint, Deployment: d.Spec.Name}}
			dec, ok := s.decideAlias(ctx, k, d.Spec.Model)
			if ok && dec.Roll {
				_, err := s.PutBatchDeployment(ctx, d.Spec, false, false)
				dec.Warning = s.rolled(k, d.Spec.Model, dec.To, err)
			}
			if ok && dec.Warning != "" {
				s.log.Warn("batch deployment follows an alias", "deployment", k.String(), "warning", dec.Warning)
			}
		}
	}
	return nil
}

// decideAlias reads where the alias a deployment's model follows points now and decides; ok
// is false for a deployment that follows no alias, or whose alias could not be read.
func (s *Serving) decideAlias(ctx context.Context, k aliasKey, m serving.ModelRef) (serving.AliasDecision, bool) {
	r, err := model.ParseRef(m.Ref, false)
	if m.Ref == "" || err != nil || r.Alias == "" {
		return serving.AliasDecision{}, false
	}
	target, err := s.resolve.ModelAliasVersion(ctx, r.Name, r.Alias)
	if isNotFound(err) {
		target, err = "", nil
	}
	if err != nil {
		s.log.Warn("read a followed alias", "deployment", k.String(), "alias", m.Ref, "err", err)
		return serving.AliasDecision{}, false
	}
	s.memo.mu.Lock()
	f := s.memo.alias.failed[k]
	s.memo.mu.Unlock()
	return serving.DecideAlias(serving.AliasInput{Model: r.Name, Alias: r.Alias, Serving: m.Version, Target: target,
		Failed: f.to, FailedAt: f.at, FailedWhy: f.why, Now: s.now()}), true
}

// rolled records how a roll to version to went, and returns the warning a failed one leaves.
func (s *Serving) rolled(k aliasKey, m serving.ModelRef, to string, err error) string {
	s.memo.mu.Lock()
	defer s.memo.mu.Unlock()
	if s.memo.alias.failed == nil {
		s.memo.alias.failed = map[aliasKey]aliasFailure{}
	}
	if err == nil {
		delete(s.memo.alias.failed, k)
		s.log.Info("deployment follows its alias", "deployment", k.String(), "model", m.Ref, "from", m.Version, "to", to)
		return ""
	}
	s.log.Error("roll a deployment to its alias's version", "deployment", k.String(), "model", m.Ref, "to", to, "err", err)
	f := aliasFailure{to: to, why: err.Error(), at: s.now()}
	s.memo.alias.failed[k] = f
	r, _ := model.ParseRef(m.Ref, false)
	return serving.DecideAlias(serving.AliasInput{Model: r.Name, Alias: r.Alias, Serving: m.Version, Target: to,
		Failed: f.to, FailedAt: f.at, FailedWhy: f.why, Now: f.at}).Warning
}

// FollowedAlias is the alias a deployment's model follows, where it points now and what the
// deployment's state warns of; nil for a deployment that follows none.
func (s *Serving) FollowedAlias(ctx context.Context, d serving.Deployment) *api.FollowedAlias {
	r, err := model.ParseRef(d.Model.Ref, false)
	if d.Model.Ref == "" || err != nil || r.Alias == "" {
		return nil
	}
	now, err := s.resolve.ModelAliasVersion(ctx, r.Name, r.Alias)
	if err != nil && !isNotFound(err) {
		s.log.Warn("read a followed alias", "alias", d.Model.Ref, "err", err)
	}
	return &api.FollowedAlias{Model: r.Name, Alias: r.Alias, Serving: d.Model.Version, AliasVersion: now,
		Warning: s.AliasWarning(d.Endpoint, d.Name)}
}

// AliasWarning is what a deployment's state warns of about the alias it follows ("" nothing).
func (s *Serving) AliasWarning(endpoint, name string) string {
	s.memo.mu.Lock()
	defer s.memo.mu.Unlock()
	return s.memo.alias.warn[serving.Key{Endpoint: endpoint, Deployment: name}]
}

func isNotFound(err error) bool {
	var we *workspace.Error
	return errors.As(err, &we) && we.Kind == workspace.NotFound
}
