"""ledger: on PostgreSQL, an append is one server-side function call (one round trip, one statement)

The function checks the case's expected version, takes the chain-head lock, hashes and inserts the
events, moves the case row and the chain head, writes the jobs and the idempotency record. Called in
autocommit, the chain-head lock is held for that one statement and never across a network round
trip. The hash is the one `store.event_hash` computes: the client sends each event's canonical JSON
body around the three values only the server knows (prev, seq, version), and the server fills them
in (`store.hash_parts`). SQLite keeps appending from Python: it has no round trips to save.

Revision ID: 0003
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

# Returns one row: outcome 'ok' (version, first_seq), 'conflict' (version: the case's
# current version) or 'replayed' (result: the stored AppendResult of the idempotency key).
APPEND = """
CREATE FUNCTION signoff_append(
    p_case text, p_case_json text, p_expected integer, p_stamp text,
    p_types text[], p_payloads text[], p_before_prev text[], p_before_seq text, p_before_version text[],
    p_job_ids text[], p_job_topics text[], p_job_payloads text[], p_job_max integer[],
    p_job_available double precision[], p_now double precision, p_idem text
) RETURNS TABLE (outcome text, version integer, first_seq bigint, result text)
LANGUAGE plpgsql AS $$
DECLARE
    n integer := coalesce(array_length(p_types, 1), 0);
    cur integer;
    v integer;
    head_seq bigint;
    prev text;
    digest text;
BEGIN
    IF p_idem IS NOT NULL THEN
        SELECT i.result INTO result FROM idempotency i WHERE i.key = p_idem;
        IF FOUND THEN
            outcome := 'replayed';
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;
    -- the case row first (a writer on the same case waits here, then sees the new version), the
    -- chain head second: the order every append takes them in
    SELECT c.version INTO cur FROM cases c WHERE c.case_id = p_case FOR UPDATE;
    v := coalesce(cur, 0);
    IF p_expected IS NOT NULL AND v <> p_expected THEN
        outcome := 'conflict';
        version := v;
        RETURN NEXT;
        RETURN;
    END IF;
    IF n > 0 THEN
        SELECT h.seq, h.hash INTO head_seq, prev FROM chain_head h WHERE h.id = 1 FOR UPDATE;
        first_seq := head_seq + 1;
        FOR i IN 1 .. n LOOP
            digest := encode(sha256(convert_to(
                p_before_prev[i] || prev || p_before_seq || (head_seq + i)::text
                || p_before_version[i] || (v + i)::text || '}', 'UTF8')), 'hex');
            INSERT INTO events (seq, case_id, version, type, payload, recorded_at, prev_hash, hash)
            VALUES (head_seq + i, p_case, v + i, p_types[i], p_payloads[i], p_stamp, prev, digest);
            prev := digest;
        END LOOP;
        IF cur IS NULL THEN
            INSERT INTO cases (case_id, version, updated_at) VALUES (p_case, v + n, p_stamp);
        ELSE
            UPDATE cases c SET version = v + n, updated_at = p_stamp WHERE c.case_id = p_case;
        END IF;
        UPDATE chain_head h SET seq = head_seq + n, hash = prev WHERE h.id = 1;
        v := v + n;
    END IF;
    INSERT INTO outbox (job_id, topic, case_id, payload, status, attempts, max_attempts, available_at,
                        created_at)
    SELECT j.id, j.topic, p_case, j.payload, 'pending', 0, j.max, j.available, p_now
    FROM unnest(p_job_ids, p_job_topics, p_job_payloads, p_job_max, p_job_available)
         AS j (id, topic, payload, max, available)
    ON CONFLICT (job_id) DO NOTHING;
    IF p_idem IS NOT NULL THEN
        result := '{"case_id":' || p_case_json || ',"seqs":['
            || coalesce((SELECT string_agg(s::text, ',' ORDER BY s)
                         FROM generate_series(first_seq, first_seq + n - 1) s), '')
            || '],"version":' || v::text || '}';
        INSERT INTO idempotency (key, case_id, result, recorded_at) VALUES (p_idem, p_case, result, p_stamp);
    END IF;
    outcome := 'ok';
    version := v;
    RETURN NEXT;
END
$$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(APPEND)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION signoff_append")
