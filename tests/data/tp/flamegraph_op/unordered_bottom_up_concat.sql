CREATE VIRTUAL TABLE fg USING __intrinsic_flamegraph((
  SELECT 30 AS id, 10 AS parent_id, 'Leaf' AS name, 2.5 AS value, 7 AS k
  UNION ALL SELECT 10, NULL, 'root', 1, 7
  UNION ALL SELECT 20, 10, 'Leaf', 4, 8
  UNION ALL SELECT 40, 30, 'deep', 1.5, 7
  UNION ALL SELECT 50, 20, 'deep', 0.5, 9
));
CREATE TABLE other AS SELECT 1 AS x;
SELECT * FROM fg(__intrinsic_flamegraph_config('value','value','view','BOTTOM_UP','aggregate','CONCAT_WITH_COMMA','k','k'));
