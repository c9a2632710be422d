import HearthStore

/// `hearth_apply_batch`, created by migration 9 and again by migration 12 (the same text: a
/// database migrated from before 9 runs it twice, harmlessly).
extension PostgresSchema {
    /// A batch's writes applied in one call (docs/scaling.md, "A batch's writes in one round
    /// trip"). The writes' entries, ancestors, leaves and priorities are slices of the arrays
    /// (the *_ends arrays hold where each write's slice ends, 1-based, inclusive). When no
    /// entry is the root or equal to, above or below another write's (`disjoint`), the whole
    /// batch is counted, deleted and inserted in a few set-based statements; otherwise the
    /// writes run one by one. A write that would replace more than max_replace rows is
    /// skipped (-1 in the answer) and takes no number: the others are numbered from
    /// base_seq + 1 in order and logged together at the end. The answer holds each write's
    /// replaced row count.
    ///
    /// Every row the function reads or deletes is found through the primary key. The
    /// planner's estimates misled it into reading tables of a few thousand rows whole: a
    /// subtree's range (`path >= p || '/' AND path < p || '0'`, the "C" collation) is
    /// estimated at 0.5 % of the table when its bounds are one row's values but at a ninth
    /// when they come from a join, so the subtree deletes joined to the entries read the
    /// table and compared every row with every entry (24 ms for 10 writes at 6,400 rows, 99
    /// ms at 26,400, against 0.3 ms); and the delete of the entries and their ancestors, a
    /// filter on two arrays, read a table of 6,400 rows whole (1.8 ms). So each subtree is
    /// a scan of the key's range for one entry (LATERAL), and the function runs with
    /// `enable_seqscan` off, which makes the planner take an index wherever one serves.
    /// Only a write of the root then reads the whole table through the index rather than
    /// in table order.
    static let applyBatchFunction = """
        CREATE OR REPLACE FUNCTION hearth_apply_batch(
            max_replace bigint, base_seq bigint, change_at bigint, disjoint boolean, entry_writes int[],
            entry_ends int[], entries text[], ancestor_ends int[], ancestors text[],
            leaf_ends int[], leaf_paths text[], leaf_kinds smallint[], leaf_ints bigint[], leaf_doubles float8[], leaf_strings text[],
            prio_ends int[], prio_paths text[], prio_kinds smallint[], prio_ints bigint[], prio_doubles float8[], prio_strings text[],
            change_paths text[], change_kinds text[], change_data text[]
        ) RETURNS bigint[] LANGUAGE plpgsql SET enable_seqscan = off AS $$
        DECLARE
            counts bigint[] := '{}';
            seqs bigint[] := '{}';
            seq bigint := base_seq;
            n bigint;
            p text;
            e0 int := 1; a0 int := 1; l0 int := 1; q0 int := 1;
        BEGIN
            -- Writes whose entries are all unrelated (none equal to, above or below another
            -- write's; no root) cannot see each other: set-based, in a few statements.
            IF disjoint THEN
                SELECT array_agg(coalesce(c.n, 0) ORDER BY g.w) INTO counts
                FROM generate_series(1, coalesce(cardinality(change_paths), 0)) AS g(w)
                LEFT JOIN (SELECT e.w, sum((SELECT count(*) FROM nodes WHERE path = e.p)
                                           + (SELECT count(*) FROM (SELECT 1 FROM nodes WHERE path >= e.p || '/' AND path < e.p || '0'
                                                                    LIMIT max_replace + 1) AS s))::bigint AS n
                           FROM unnest(entry_writes, entries) AS e(w, p) GROUP BY e.w) AS c ON c.w = g.w;
                IF NOT EXISTS (SELECT 1 FROM unnest(counts) AS c(n) WHERE c.n > max_replace) THEN
                    -- Each entry's subtree is found in the primary key entry by entry (LATERAL,
                    -- kept apart by its LIMIT, which the counts above make harmless), not by a
                    -- join (see `applyBatchFunction`).
                    DELETE FROM nodes WHERE path = ANY(entries) OR path = ANY(ancestors);
                    DELETE FROM nodes WHERE path = ANY(ARRAY(
                        SELECT s.path FROM unnest(entries) AS e(p), LATERAL (
                            SELECT path FROM nodes WHERE path >= e.p || '/' AND path < e.p || '0' LIMIT max_replace + 1) AS s));
                    DELETE FROM priorities WHERE path = ANY(entries);
                    DELETE FROM priorities WHERE path = ANY(ARRAY(
                        SELECT s.path FROM unnest(entries) AS e(p), LATERAL (
                            SELECT path FROM priorities WHERE path >= e.p || '/' AND path < e.p || '0' LIMIT max_replace + 1) AS s));
                    INSERT INTO nodes(path, kind, ival, dval, sval)
                    SELECT * FROM unnest(leaf_paths, leaf_kinds, leaf_ints, leaf_doubles, leaf_strings);
                    INSERT INTO priorities(path, kind, ival, dval, sval)
                    SELECT * FROM unnest(prio_paths, prio_kinds, prio_ints, prio_doubles, prio_strings)
                    ON CONFLICT (path) DO UPDATE SET kind = excluded.kind, ival = excluded.ival, dval = excluded.dval, sval = excluded.sval;
                    INSERT INTO changes(seq, path, kind, data, at)
                    SELECT base_seq + u.w, u.cp, u.ck, u.cd, change_at
                    FROM unnest(change_paths, change_kinds, change_data) WITH ORDINALITY AS u(cp, ck, cd, w) ORDER BY u.w;
                    RETURN counts;
                END IF;
                counts := '{}';  -- one write is too large: one by one, below
            END IF;
            FOR w IN 1..coalesce(cardinality(change_paths), 0) LOOP
                n := 0;
                FOR k IN e0..entry_ends[w] LOOP
                    p := entries[k];
                    IF p = '' THEN
                        n := n + (SELECT count(*) FROM (SELECT 1 FROM nodes LIMIT greatest(0, max_replace + 1 - n)) AS s);
                    ELSE
                        n := n + (SELECT count(*) FROM nodes WHERE path = p);
                        n := n + (SELECT count(*) FROM (SELECT 1 FROM nodes WHERE path >= p || '/' AND path < p || '0'
                                  LIMIT greatest(0, max_replace + 1 - n)) AS s);
                    END IF;
                    EXIT WHEN n > max_replace;
                END LOOP;
                IF n > max_replace THEN
                    counts := array_append(counts, (-1)::bigint);
                    seqs := array_append(seqs, NULL::bigint);
                ELSE
                    FOR k IN e0..entry_ends[w] LOOP
                        p := entries[k];
                        IF p = '' THEN
                            DELETE FROM nodes;
                            DELETE FROM priorities;
                        ELSE
                            DELETE FROM nodes WHERE path = p;
                            DELETE FROM nodes WHERE path >= p || '/' AND path < p || '0';
                            DELETE FROM priorities WHERE path = p;
                            DELETE FROM priorities WHERE path >= p || '/' AND path < p || '0';
                        END IF;
                    END LOOP;
                    IF ancestor_ends[w] >= a0 THEN
                        DELETE FROM nodes WHERE path = ANY(ancestors[a0:ancestor_ends[w]]);
                    END IF;
                    IF leaf_ends[w] >= l0 THEN
                        INSERT INTO nodes(path, kind, ival, dval, sval)
                        SELECT * FROM unnest(leaf_paths[l0:leaf_ends[w]], leaf_kinds[l0:leaf_ends[w]], leaf_ints[l0:leaf_ends[w]],
                                             leaf_doubles[l0:leaf_ends[w]], leaf_strings[l0:leaf_ends[w]]);
                    END IF;
                    IF prio_ends[w] >= q0 THEN
                        INSERT INTO priorities(path, kind, ival, dval, sval)
                        SELECT * FROM unnest(prio_paths[q0:prio_ends[w]], prio_kinds[q0:prio_ends[w]], prio_ints[q0:prio_ends[w]],
                                             prio_doubles[q0:prio_ends[w]], prio_strings[q0:prio_ends[w]])
                        ON CONFLICT (path) DO UPDATE SET kind = excluded.kind, ival = excluded.ival, dval = excluded.dval, sval = excluded.sval;
                    END IF;
                    seq := seq + 1;
                    counts := array_append(counts, n);
                    seqs := array_append(seqs, seq);
                END IF;
                e0 := entry_ends[w] + 1; a0 := ancestor_ends[w] + 1; l0 := leaf_ends[w] + 1; q0 := prio_ends[w] + 1;
            END LOOP;
            INSERT INTO changes(seq, path, kind, data, at)
            SELECT s, cp, ck, cd, change_at FROM unnest(seqs, change_paths, change_kinds, change_data) AS u(s, cp, ck, cd)
            WHERE s IS NOT NULL ORDER BY s;
            RETURN counts;
        END
        $$;
        """
}
