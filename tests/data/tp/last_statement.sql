-- last_statement.sql - for tests/integration/tp_shell.sh: only the last
-- statement's result is printed, the earlier ones still run.
/* A block comment; the next statement prints nothing. */
SELECT 'not printed' AS hidden;
CREATE TABLE shell_test AS SELECT 5 AS v UNION ALL SELECT 6;
SELECT v, v * 2 AS twice FROM shell_test ORDER BY v;
-- a trailing comment is not a statement
