"""The archive's public schema (DESIGN.md, The archive) and its version.

Table and column names are public: users query them with SQL. More columns
are fine; a change of meaning bumps SCHEMA_VERSION and ships a migration.
`events."at"` must be quoted in DuckDB, where AT is a reserved word.
`llm_calls.instance_id` (the instance an agent's call was made for; NULL for
the meta-agent's calls) is a later, nullable column: MIGRATIONS adds it to an
archive made before it, when the archive is opened for writing; so is the
`trajectory_steps` table (a coding agent's steps: kind 'evaluation', one
per (node, instance, repeat), or 'expansion', the parent's steps while it
edited itself into this node; OPTIONAL_TABLES may be absent from an older
archive or snapshot); and `nodes.note`, the improvement note (the review
that planned the change which made this node, with --meta-steps
diagnose,implement; NULL otherwise).
"""
from __future__ import annotations

SCHEMA_VERSION = 1

TRAJECTORY_TABLE = """
CREATE TABLE IF NOT EXISTS trajectory_steps (
    node_id BIGINT NOT NULL,
    kind VARCHAR NOT NULL,
    instance_id VARCHAR,
    "repeat" INTEGER NOT NULL,
    step INTEGER NOT NULL,
    tool VARCHAR,
    action VARCHAR,
    tokens_in BIGINT,
    tokens_out BIGINT,
    time_s DOUBLE,
    result VARCHAR,
    UNIQUE (node_id, kind, instance_id, "repeat", step)
);
"""
OPTIONAL_TABLES = frozenset({"trajectory_steps"})

TABLES = """
CREATE TABLE IF NOT EXISTS runs (
    id VARCHAR PRIMARY KEY,
    config JSON NOT NULL,
    schema_version INTEGER NOT NULL,
    seed BIGINT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    status VARCHAR NOT NULL,
    updated_at TIMESTAMP
);
CREATE TABLE IF NOT EXISTS instances (
    id VARCHAR PRIMARY KEY,
    split VARCHAR NOT NULL,
    data JSON NOT NULL
);
CREATE TABLE IF NOT EXISTS nodes (
    id BIGINT PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    parent_id BIGINT,
    depth INTEGER NOT NULL,
    status VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL,
    mutator VARCHAR NOT NULL,
    model VARCHAR,
    diff VARCHAR,
    code_hash VARCHAR,
    reason VARCHAR,
    description VARCHAR,
    note VARCHAR
);
CREATE TABLE IF NOT EXISTS blobs (
    hash VARCHAR PRIMARY KEY,
    content VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS node_files (
    node_id BIGINT NOT NULL,
    path VARCHAR NOT NULL,
    hash VARCHAR NOT NULL,
    PRIMARY KEY (node_id, path)
);
CREATE TABLE IF NOT EXISTS evaluations (
    node_id BIGINT NOT NULL,
    instance_id VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    "repeat" INTEGER NOT NULL,
    score DOUBLE NOT NULL,
    metrics JSON,
    status VARCHAR NOT NULL,
    runtime_s DOUBLE,
    stdout_tail VARCHAR,
    stderr_tail VARCHAR,
    feedback VARCHAR,
    worker VARCHAR,
    started_at TIMESTAMP,
    finished_at TIMESTAMP,
    UNIQUE (node_id, instance_id, "repeat")
);
CREATE TABLE IF NOT EXISTS reference_evaluations (
    agent VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    score DOUBLE NOT NULL,
    metrics JSON,
    status VARCHAR NOT NULL,
    runtime_s DOUBLE,
    feedback VARCHAR,
    UNIQUE (agent, instance_id)
);
CREATE TABLE IF NOT EXISTS llm_calls (
    id BIGINT PRIMARY KEY,
    node_id BIGINT,
    purpose VARCHAR,
    model VARCHAR,
    request_hash VARCHAR,
    request JSON,
    response JSON,
    tokens_in BIGINT,
    tokens_out BIGINT,
    cost_usd DOUBLE,
    latency_s DOUBLE,
    error VARCHAR,
    created_at TIMESTAMP,
    instance_id VARCHAR
);
CREATE TABLE IF NOT EXISTS events (
    seq BIGINT PRIMARY KEY,
    "at" TIMESTAMP NOT NULL,
    kind VARCHAR NOT NULL,
    node_id BIGINT,
    detail JSON
);
""" + TRAJECTORY_TABLE

# Additive, idempotent changes run on an archive opened for writing (no change of meaning: no version bump).
MIGRATIONS = (
    "ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS instance_id VARCHAR",
    "ALTER TABLE nodes ADD COLUMN IF NOT EXISTS note VARCHAR",
    TRAJECTORY_TABLE,
)
