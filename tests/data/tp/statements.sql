-- statements.sql - for tests/integration/tp_shell.sh: every result set is
-- printed, statements without one (CREATE) print nothing.
/* A block comment; the next statement prints a result too. */
SELECT 'printed' AS hidden;
CREATE TABLE shell_test AS SELECT 5 AS v UNION ALL SELECT 6;
SELECT v, v * 2 AS twice FROM shell_test ORDER BY v;
-- a trailing comment is not a statement
