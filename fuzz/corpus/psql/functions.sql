CREATE PERFETTO FUNCTION h(args ANY...) RETURNS LONG DELEGATES TO hash;
SELECT h(1, 'a'), h('b');
SELECT create_function('fact(x INT)', 'INT', 'SELECT IIF($x = 0, 1, $x * fact($x - 1))');
SELECT EXPERIMENTAL_MEMOIZE('fact'), fact(10);
SELECT create_view_function('upto(n INT)', 'i INT', 'SELECT $n AS i');
SELECT * FROM upto(3);
CREATE OR REPLACE PERFETTO FUNCTION fact(x INT) RETURNS INT AS SELECT nope;
SELECT fact(1);
SELECT regexp('a+', 'caab'), regexp_extract('a12', '(\d+)'), regexp_replace_simple('aaa', 'a*', '-');
