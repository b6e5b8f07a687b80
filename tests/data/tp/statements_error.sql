-- statements_error.sql - for tests/integration/tp_shell_output.sh: the
-- first two results are printed, the third statement fails after a row
-- (nothing of it is printed), the fourth never runs.
SELECT 'one' AS first;
CREATE TABLE out_test(v INT);
INSERT INTO out_test VALUES (1), (2), (3);
SELECT v FROM out_test WHERE v > 5;
SELECT v, CASE WHEN v = 3 THEN abs(-9223372036854775807 - 1) ELSE v END AS w
FROM out_test ORDER BY v;
SELECT 'never' AS after_error;
