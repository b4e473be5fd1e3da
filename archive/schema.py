"""The archive's public schema (docs/design.md, "The data model: the archive") and its version.

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

The arena (`--arena`, engine/arena/) adds, the same way: `nodes.role`
('agent', or 'tester' for the test-writing population, which has its own
root), `instances.origin` ('task', or 'arena' for an instance a tester
proposed and the task's oracle confirmed) with its provenance
`instances.tester_id` and `instances.arena_round`, and the table
`arena_proposals` (every proposal, accepted or not, with the oracle's word).
A tester's run is an evaluation of split 'arena' (instance `round-R`).

The LLM mutator's own scratchpad and prompts add, the same way: the table
`recommendations` (`--meta-recommendations N`: each version of the
recommendations a model wrote every N expansions, with the node count when
written and its llm_calls row) and `nodes.recommendations_version` (the
version a child's prompt carried; NULL: none); the table `prompts`
(`--evolve-prompts`: the population of instruction texts, each with the
prompt it was written from) and `nodes.prompt_id` (the prompt a child was
made with; NULL without --evolve-prompts).
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
ARENA_TABLE = """
CREATE TABLE IF NOT EXISTS arena_proposals (
    tester_id BIGINT NOT NULL,
    arena_round INTEGER NOT NULL,
    item INTEGER NOT NULL,
    proposal JSON NOT NULL,
    accepted BOOLEAN NOT NULL,
    reason VARCHAR,
    instance_id VARCHAR,
    UNIQUE (tester_id, arena_round, item)
);
"""
RECOMMENDATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS recommendations (
    run_id VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    written_at_nodes BIGINT NOT NULL,
    text VARCHAR NOT NULL,
    llm_call_id BIGINT,
    created_at TIMESTAMP,
    UNIQUE (version)
);
"""
PROMPTS_TABLE = """
CREATE TABLE IF NOT EXISTS prompts (
    id BIGINT PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    parent_id BIGINT,
    text VARCHAR NOT NULL,
    written_at_nodes BIGINT NOT NULL,
    llm_call_id BIGINT,
    created_at TIMESTAMP
);
"""
OPTIONAL_TABLES = frozenset({"trajectory_steps", "arena_proposals", "recommendations", "prompts"})

TABLES = (
    """
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
    data JSON NOT NULL,
    origin VARCHAR DEFAULT 'task',
    tester_id BIGINT,
    arena_round INTEGER
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
    note VARCHAR,
    role VARCHAR DEFAULT 'agent',
    recommendations_version INTEGER,
    prompt_id BIGINT
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
"""
    + TRAJECTORY_TABLE
    + ARENA_TABLE
    + RECOMMENDATIONS_TABLE
    + PROMPTS_TABLE
)

# Additive, idempotent changes run on an archive opened for writing (no change of meaning: no version bump).
MIGRATIONS = (
    "ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS instance_id VARCHAR",
    "ALTER TABLE nodes ADD COLUMN IF NOT EXISTS note VARCHAR",
    TRAJECTORY_TABLE,
    "ALTER TABLE nodes ADD COLUMN IF NOT EXISTS role VARCHAR DEFAULT 'agent'",
    "ALTER TABLE instances ADD COLUMN IF NOT EXISTS origin VARCHAR DEFAULT 'task'",
    "ALTER TABLE instances ADD COLUMN IF NOT EXISTS tester_id BIGINT",
    "ALTER TABLE instances ADD COLUMN IF NOT EXISTS arena_round INTEGER",
    ARENA_TABLE,
    RECOMMENDATIONS_TABLE,
    "ALTER TABLE nodes ADD COLUMN IF NOT EXISTS recommendations_version INTEGER",
    PROMPTS_TABLE,
    "ALTER TABLE nodes ADD COLUMN IF NOT EXISTS prompt_id BIGINT",
)
