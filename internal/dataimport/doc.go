// Package dataimport is what a data import's run does on its node, outside the user's box
// (docs/data.md "Connections and data import"): a database source's one query run with pgx and
// written as CSV with an MLTable file (Azure's mltable format reading delimited files), or a
// file_system source's objects copied from an S3 bucket. Errors never carry the credentials.
package dataimport
