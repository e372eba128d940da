-- +goose Up
-- OpenID Connect login for the studio (issue 18, docs/users.md): the subject ("sub") a user
-- signs in as at the server's configured issuer. Empty: none; a subject maps to one user.
ALTER TABLE users ADD COLUMN oidc_subject TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX users_oidc_subject ON users (oidc_subject) WHERE oidc_subject <> '';
